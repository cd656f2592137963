/** Whether a capability only reads data or changes something. */
export type CapabilityKind = 'read' | 'write';

/** A registry of capability flags: `canX` → its kind. */
export type CapabilityRegistry = Readonly<Record<string, { kind: CapabilityKind }>>;

/** The capability flags Deskpilot knows out of the box. */
export const builtinCapabilities = {
  canViewOrders: { kind: 'read' },
  canViewCustomers: { kind: 'read' },
  canViewProducts: { kind: 'read' },
  canViewTickets: { kind: 'read' },
  canRefundOrders: { kind: 'write' },
  canCancelOrders: { kind: 'write' },
  canCreateTickets: { kind: 'write' },
  canUpdateTickets: { kind: 'write' },
} as const satisfies CapabilityRegistry;

/** Shape of a capability flag name. */
export const capabilityNamePattern = /^can[A-Z][A-Za-z0-9]*$/;

/**
 * Extends the built-in registry with your own flags. A built-in flag cannot change its kind.
 *
 * @example
 * const capabilities = defineCapabilities({ canIssueVouchers: { kind: 'write' } });
 */
export function defineCapabilities(extra: CapabilityRegistry = {}): CapabilityRegistry {
  for (const [name, definition] of Object.entries(extra)) {
    if (!capabilityNamePattern.test(name))
      throw new TypeError(`Capability names look like canDoSomething: ${JSON.stringify(name)}`);
    const builtin = (builtinCapabilities as CapabilityRegistry)[name];
    if (builtin && builtin.kind !== definition.kind)
      throw new TypeError(`${name} is a built-in ${builtin.kind} capability`);
    if (definition.kind !== 'read' && definition.kind !== 'write')
      throw new TypeError(`${name}: kind must be "read" or "write"`);
  }
  return Object.freeze({ ...builtinCapabilities, ...extra });
}

/**
 * Resolves the flags a request carries against a registry, with least privilege: a read capability
 * defaults to true, a write capability to false, and a flag the registry does not know grants nothing.
 */
export function resolveCapabilities(
  flags: Readonly<Record<string, boolean>>,
  registry: CapabilityRegistry,
): Record<string, boolean> {
  const resolved: Record<string, boolean> = {};
  for (const [name, { kind }] of Object.entries(registry)) {
    resolved[name] = Object.hasOwn(flags, name) ? flags[name] === true : kind === 'read';
  }
  return resolved;
}
