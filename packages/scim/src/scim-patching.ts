import * as z from 'zod/mini';
import { parse as parseFilter, type Filter } from 'scim2-parse-filter';
import { scimPatch, type ScimPatchOperation } from 'scim-patch';
import { ScimProblem, schemaUrns } from './scim-resources.js';

// PATCH (RFC 7644 §3.5.2) as Okta and Entra ID send it, applied with scim-patch.

const operation = z.object({
  op: z.string().check(z.regex(/^(add|remove|replace)$/i, 'Must be add, remove or replace')),
  path: z.optional(z.string().check(z.maxLength(500))),
  value: z.optional(z.unknown()),
});

/** A PatchOp message: `Operations` as RFC 7644 spells it (Entra ID and Okta alike), 1 to 100 of them. */
const patchMessage = z.object({
  schemas: z
    .array(z.string())
    .check(z.refine((list) => list.includes(schemaUrns.patch), `Must name ${schemaUrns.patch}`)),
  Operations: z.array(operation).check(z.minLength(1), z.maxLength(100)),
});

export type PatchOperation = { op: 'add' | 'remove' | 'replace'; path?: string | undefined; value?: unknown };

/** An attribute PATCH may reach: a simple one (null), or a complex one with its sub-attributes. */
type Attributes = Readonly<Record<string, readonly string[] | null>>;

const multiValued = ['value', 'type', 'primary', 'display'] as const;
const userAttributes: Attributes = {
  userName: null,
  externalId: null,
  active: null,
  displayName: null,
  nickName: null,
  title: null,
  userType: null,
  preferredLanguage: null,
  locale: null,
  timezone: null,
  name: ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'],
  emails: multiValued,
  phoneNumbers: multiValued,
};
const enterpriseAttributes: Attributes = {
  employeeNumber: null,
  costCenter: null,
  organization: null,
  division: null,
  department: null,
  manager: ['value', 'displayName'],
};
/** What PATCH may reach of a resource: its attributes, and its extension's. */
export const patchable = {
  user: { attributes: userAttributes, extension: enterpriseAttributes },
  group: { attributes: { displayName: null, externalId: null } as Attributes, extension: undefined },
};
type Patchable = (typeof patchable)[keyof typeof patchable];

const invalidPath = (path: string) => new ScimProblem(400, `No such path: ${path}`, 'invalidPath');
const invalidValue = () =>
  new ScimProblem(400, 'A value names an attribute this resource does not have.', 'invalidValue');
const isPrimitive = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);
const own = (attributes: Attributes, name: string) => Object.hasOwn(attributes, name);

/** A value for one attribute: a simple one's a primitive; a complex one's objects of its sub-attributes. */
function checkAttributeValue(subAttributes: readonly string[] | null, value: unknown): void {
  if (subAttributes === null) {
    if (!isPrimitive(value)) throw invalidValue();
    return;
  }
  for (const entry of Array.isArray(value) ? value : [value]) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw invalidValue();
    for (const [key, inner] of Object.entries(entry))
      if (!subAttributes.includes(key) || !isPrimitive(inner)) throw invalidValue();
  }
}

/** A value without a path: an object of the resource's attributes (its extension's under its URN). */
function checkResourceValue(resource: Patchable, value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidValue();
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'id' || key === 'schemas') continue;
    if (resource.extension && key === schemaUrns.enterprise) {
      if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) throw invalidValue();
      for (const [name, leaf] of Object.entries(inner))
        if (own(resource.extension, name)) checkAttributeValue(resource.extension[name]!, leaf);
        else throw invalidValue();
    } else if (own(resource.attributes, key)) checkAttributeValue(resource.attributes[key]!, inner);
    else throw invalidValue();
  }
}

/** A filter inside a path (`emails[type eq "work"]`): comparisons of the attribute's sub-attributes only. */
function checkPathFilter(text: string, subAttributes: readonly string[], path: string): void {
  let filter: Filter;
  try {
    filter = parseFilter(text);
  } catch {
    throw invalidPath(path);
  }
  const walk = (node: Filter): void => {
    if ('filters' in node) return node.filters.forEach(walk);
    if ('filter' in node) return walk(node.filter);
    if (!('attrPath' in node) || !subAttributes.includes(node.attrPath) || 'valFilter' in node) throw invalidPath(path);
    // scim-patch reads a path with its own, looser parser: brackets, quotes and colons inside a value
    // would end the filter early for it, and the rest would be followed as names.
    if ('compValue' in node && typeof node.compValue === 'string' && /["[\]:]/.test(node.compValue))
      throw invalidPath(path);
  };
  walk(filter);
}

/** The names no path may hold a piece of: what every object inherits. */
const inherited = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

const pathShape = /^([A-Za-z][A-Za-z0-9]*)(?:\[(.+)\])?(?:\.([A-Za-z][A-Za-z0-9]*))?$/s;

/**
 * Holds an operation to the attributes the resource has: its path (`name.givenName`,
 * `emails[type eq "work"].value`, the extension's `urn:…:User:department`) and every key of its value.
 * scim-patch follows any name it is given, `__proto__` and `hasOwnProperty` included: nothing else
 * reaches it.
 */
function checkOperation(resource: Patchable, operation: PatchOperation): void {
  const path = operation.path?.trim();
  // Whatever any parser makes of the path, no piece of it may name what Object.prototype holds.
  if (path !== undefined && path.split(/[\s.:[\]"]+/).some((piece) => inherited.has(piece))) throw invalidPath(path);
  if (path === undefined || path === '') {
    if (operation.op !== 'remove') checkResourceValue(resource, operation.value);
    return;
  }
  let attributes = resource.attributes;
  let rest = path;
  if (resource.extension && path.startsWith(`${schemaUrns.enterprise}:`)) {
    attributes = resource.extension;
    rest = path.slice(schemaUrns.enterprise.length + 1);
  } else if (resource.extension && path === schemaUrns.enterprise) {
    if (operation.op !== 'remove') checkResourceValue(resource, { [schemaUrns.enterprise]: operation.value });
    return;
  } else if (path.startsWith(`${schemaUrns.user}:`)) rest = path.slice(schemaUrns.user.length + 1);
  const [, name, filter, sub] = pathShape.exec(rest) ?? [];
  if (name === undefined || !own(attributes, name)) throw invalidPath(path);
  const subAttributes = attributes[name]!;
  if ((filter !== undefined || sub !== undefined) && subAttributes === null) throw invalidPath(path);
  if (filter !== undefined) checkPathFilter(filter, subAttributes!, path);
  if (sub !== undefined && !subAttributes!.includes(sub)) throw invalidPath(path);
  if (operation.op === 'remove' && operation.value === undefined) return;
  checkAttributeValue(
    sub !== undefined || (filter !== undefined && subAttributes === null) ? null : subAttributes,
    operation.value,
  );
}

/** The operations of a PatchOp body, `op` in lower case; 400 `invalidSyntax` otherwise. */
export function patchOperations(body: unknown): PatchOperation[] {
  const result = z.safeParse(patchMessage, body);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ScimProblem(400, `${issue.path.map(String).join('.')}: ${issue.message}`, 'invalidSyntax');
  }
  return result.data.Operations.map(({ op, path, value }) => ({
    op: op.toLowerCase() as PatchOperation['op'],
    path,
    value,
  }));
}

/**
 * Runs `work`, then holds `Object.prototype` and `Array.prototype` to what they were: defence in depth
 * behind the checks that keep scim-patch off them. Should it ever reach them, what it added goes, what
 * it replaced comes back, and the patch is refused.
 */
export function untouchedPrototypes<T>(work: () => T): T {
  const prototypes = [Object.prototype, Array.prototype];
  // Maps, not objects: a snapshot that inherited from Object.prototype would see what was added to it.
  const before = prototypes.map(
    (prototype) =>
      new Map(Reflect.ownKeys(prototype).map((key) => [key, Object.getOwnPropertyDescriptor(prototype, key)!])),
  );
  let touched = false;
  try {
    return work();
  } finally {
    // Also when `work` threw half way.
    prototypes.forEach((prototype, index) => {
      const kept = before[index]!;
      for (const key of Reflect.ownKeys(prototype)) {
        const was = kept.get(key);
        const now = Object.getOwnPropertyDescriptor(prototype, key)!;
        if (was && was.value === now.value && was.get === now.get && was.set === now.set) continue;
        touched = true;
        if (was) Object.defineProperty(prototype, key, was);
        else delete (prototype as Record<PropertyKey, unknown>)[key];
      }
    });
    if (touched) throw new ScimProblem(400, 'The patch reaches what every object inherits.', 'invalidPath');
  }
}

/**
 * Applies `operations` to `resource` (a copy: `resource` is left as it was) with scim-patch, each held
 * to the attributes the resource `kind` has first; a refused operation is 400 with its `scimType`
 * (`invalidPath`, `noTarget`, `invalidValue`).
 */
export function applyPatch<T extends object>(
  kind: keyof typeof patchable,
  resource: T,
  operations: readonly PatchOperation[],
): Record<string, unknown> {
  for (const operation of operations) checkOperation(patchable[kind], operation);
  if (operations.length === 0) return { ...resource } as Record<string, unknown>;
  const document = {
    schemas: [schemaUrns.user],
    meta: { created: new Date(0), lastModified: new Date(0) },
    ...resource,
  };
  try {
    const patched = untouchedPrototypes(() =>
      scimPatch(document, operations as ScimPatchOperation[], { mutateDocument: false, treatMissingAsAdd: true }),
    );
    const { schemas: _schemas, meta: _meta, ...rest } = patched as Record<string, unknown>;
    return rest;
  } catch (error) {
    const scimType = (error as { scimCode?: string }).scimCode;
    const known = ['invalidPath', 'noTarget', 'invalidValue', 'mutability'] as const;
    throw new ScimProblem(
      400,
      error instanceof Error ? error.message.replace(/\s*\[object Object\]$/, '') : 'The patch cannot be applied.',
      known.find((type) => type === scimType) ?? 'invalidValue',
    );
  }
}

/** The member ids of a `members` value: `[{ value }]`. */
function memberValues(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.map((entry) => {
    const id = (entry as { value?: unknown } | null)?.value;
    if (typeof id !== 'string' || id.length === 0 || id.length > 200)
      throw new ScimProblem(400, 'A member is { "value": "<user id>" }.', 'invalidValue');
    return id;
  });
}

/** The ids a `members[value eq "…"]` path names (`or` of them too). */
function filteredMembers(path: string): string[] {
  const inner = /^members\[(.*)\]$/is.exec(path.trim())?.[1];
  let filter: Filter;
  try {
    filter = parseFilter(inner ?? '');
  } catch {
    throw new ScimProblem(400, `No such path: ${path}`, 'invalidPath');
  }
  const ids = (node: Filter): string[] => {
    if (node.op === 'or' && 'filters' in node) return node.filters.flatMap(ids);
    if (
      node.op === 'eq' &&
      'attrPath' in node &&
      node.attrPath.toLowerCase() === 'value' &&
      typeof node.compValue === 'string'
    )
      return [node.compValue];
    throw new ScimProblem(400, `Only members[value eq "…"] is supported: ${path}`, 'invalidFilter');
  };
  return ids(filter);
}

/** What a group PATCH does: its other attributes' operations, and the members added and removed in order. */
export interface GroupPatch {
  attributes: PatchOperation[];
  members: { add: Set<string>; remove: Set<string>; replace: boolean } | undefined;
}

/**
 * Splits a group's PATCH: operations on `members` — add by value, remove by value (Entra ID) or by
 * `members[value eq "…"]` (Okta), replace, remove all — become one change of members, applied in the
 * order given, at most `maxMembers` of them in one request; the rest (`displayName`, `externalId`) are
 * patched onto the group.
 */
export function groupPatch(operations: readonly PatchOperation[], maxMembers = 1000): GroupPatch {
  const attributes: PatchOperation[] = [];
  let members: GroupPatch['members'];
  const change = () => (members ??= { add: new Set(), remove: new Set(), replace: false });
  const add = (ids: string[]) => ids.forEach((id) => (change().remove.delete(id), change().add.add(id)));
  const remove = (ids: string[]) => ids.forEach((id) => (change().add.delete(id), change().remove.add(id)));
  const replace = (ids: string[]) => {
    members = { add: new Set(ids), remove: new Set(), replace: true };
  };
  for (const operation of operations) {
    const path = operation.path?.trim();
    if (path === undefined || path === '') {
      // No path: the value's attributes, `members` among them (Okta renames a group this way).
      if (typeof operation.value !== 'object' || operation.value === null || Array.isArray(operation.value))
        throw new ScimProblem(400, 'An operation without a path takes an object.', 'invalidValue');
      const { members: given, ...rest } = operation.value as Record<string, unknown>;
      if (given !== undefined) (operation.op === 'add' ? add : replace)(memberValues(given));
      if (Object.keys(rest).length > 0) attributes.push({ ...operation, value: rest });
      continue;
    }
    if (/^members$/i.test(path)) {
      if (operation.op === 'add') add(memberValues(operation.value));
      else if (operation.op === 'replace') replace(memberValues(operation.value));
      else if (operation.value === undefined) replace([]);
      else remove(memberValues(operation.value));
    } else if (/^members\[/i.test(path)) {
      if (operation.op !== 'remove') throw new ScimProblem(400, `Only remove takes ${path}`, 'invalidPath');
      remove(filteredMembers(path));
    } else attributes.push(operation);
  }
  const touched = members ? members.add.size + members.remove.size : 0;
  if (touched > maxMembers)
    throw new ScimProblem(
      400,
      `A PATCH changes at most ${maxMembers} members: send the rest in another.`,
      'invalidValue',
    );
  return { attributes, members };
}
