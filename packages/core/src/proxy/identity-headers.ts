import type { Session } from '../session/session.js';

/** Options naming the identity headers. */
export interface IdentityHeaderOptions {
  /** Headers are `x-<prefix>-user-email`, `-project-key`, `-client-id`, `-role`. @default "deskpilot" */
  prefix?: string;
}

/** The four identity header names for a prefix. */
export function identityHeaderNames(options: IdentityHeaderOptions = {}) {
  const base = `x-${canonical(options.prefix ?? 'deskpilot')}-`;
  return {
    userEmail: `${base}user-email`,
    projectKey: `${base}project-key`,
    clientId: `${base}client-id`,
    role: `${base}role`,
  } as const;
}

/**
 * True for any spelling of a header in the identity namespace `x-<prefix>-*`: any case, `_` for `-`.
 * The whole namespace is reserved, so a header added later can never be forged by a client either.
 */
export function isIdentityHeader(name: string, options: IdentityHeaderOptions = {}): boolean {
  return canonical(name).startsWith(`x-${canonical(options.prefix ?? 'deskpilot')}-`);
}

/** The identity headers to stamp on a downstream call, from the session service's answer. */
export function stampIdentityHeaders(session: Session, options: IdentityHeaderOptions = {}): Array<[string, string]> {
  const names = identityHeaderNames(options);
  return [
    [names.userEmail, session.user.email],
    [names.projectKey, session.projectKey],
    [names.clientId, session.clientId],
    [names.role, session.role],
  ];
}

function canonical(name: string): string {
  return name.trim().toLowerCase().replaceAll('_', '-');
}

/** Incoming headers as Node gives them: lower-case names, repeated values possibly as arrays. */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

// RFC 9110 §7.6.1: connection-specific headers are never forwarded by a proxy.
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

/**
 * The headers to send downstream: the client's headers without hop-by-hop headers and without any
 * spelling of the identity namespace, plus the identity stamped from the session. Pure: adapters only
 * copy the result onto the outgoing request.
 */
export function downstreamHeaders(incoming: IncomingHeaders, session: Session, options: IdentityHeaderOptions = {}): Record<string, string | string[]> {
  const out = endToEndHeaders(incoming);
  for (const name of Object.keys(out)) if (isIdentityHeader(name, options)) delete out[name];
  for (const [name, value] of stampIdentityHeaders(session, options)) out[name] = value;
  return out;
}

/** Headers without the hop-by-hop ones (fixed list plus those named in `Connection`), names in lower case. */
export function endToEndHeaders(incoming: IncomingHeaders): Record<string, string | string[]> {
  const connectionListed = new Set(
    [incoming.connection ?? []].flat().flatMap((value) => value.split(',')).map((name) => name.trim().toLowerCase()),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    const lower = name.toLowerCase();
    if (value === undefined || hopByHop.has(lower) || connectionListed.has(lower)) continue;
    out[lower] = value;
  }
  return out;
}
