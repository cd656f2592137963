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
