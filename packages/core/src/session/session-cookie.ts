import { parseCookie, stringifySetCookie } from 'cookie';

/** Options of {@link createSessionCookie}. */
export interface SessionCookieOptions {
  /** Cookie name prefix: the cookie is `<prefix>_session`. @default "deskpilot" */
  prefix?: string;
  /** Send `Secure`. Turn off only for plain-http development. @default true */
  secure?: boolean;
}

/** Reads and writes the session cookie. */
export interface SessionCookie {
  readonly name: string;
  /** The cookie value when the header carries exactly one cookie of this name; null otherwise. */
  read(cookieHeader: string | null | undefined): string | null;
  /** `Set-Cookie` value carrying a token for `maxAgeSeconds`. */
  serialize(token: string, maxAgeSeconds: number): string;
  /** `Set-Cookie` value that deletes the cookie. */
  clear(): string;
}

/**
 * Builds the session cookie codec: `<prefix>_session`, `HttpOnly; Secure; SameSite=Lax; Path=/`, no
 * `Domain` (the cookie stays on the host that set it).
 */
export function createSessionCookie(options: SessionCookieOptions = {}): SessionCookie {
  const prefix = options.prefix ?? 'deskpilot';
  if (!/^[A-Za-z0-9-]{1,64}$/.test(prefix)) throw new TypeError(`Invalid cookie prefix: ${JSON.stringify(prefix)}`);
  const name = `${prefix}_session`;
  const attributes = { httpOnly: true, secure: options.secure ?? true, sameSite: 'lax', path: '/' } as const;
  const occurrence = new RegExp(`(?:^|;)\\s*${name}\\s*=`, 'g');

  return {
    name,
    read(cookieHeader) {
      if (!cookieHeader) return null;
      // Two cookies of our name (say, one tossed in by a sibling subdomain) are ambiguous: refuse both.
      const count = cookieHeader.match(occurrence)?.length ?? 0;
      if (count !== 1) return null;
      return parseCookie(cookieHeader)[name] ?? null;
    },
    serialize(token, maxAgeSeconds) {
      return stringifySetCookie({ name, value: token, maxAge: Math.max(0, Math.floor(maxAgeSeconds)), ...attributes });
    },
    clear() {
      return stringifySetCookie({ name, value: '', maxAge: 0, ...attributes });
    },
  };
}
