import { parseCookie } from 'cookie';
import { describe, expect, it } from 'vitest';
import type { Session } from '../session/session.js';
import {
  defaultDeniedHeaders,
  downstreamHeaders,
  identityHeaderNames,
  isIdentityHeader,
  stampIdentityHeaders,
} from './identity-headers.js';

const session = {
  user: { id: 'usr_bob', email: 'bob@example.com', name: 'Bob' },
  projectKey: 'globex-b2c',
  clientId: 'globex',
  role: 'viewer',
} as Session;

const stamped = {
  'x-deskpilot-user-email': 'bob@example.com',
  'x-deskpilot-project-key': 'globex-b2c',
  'x-deskpilot-client-id': 'globex',
  'x-deskpilot-role': 'viewer',
};

describe('identity headers', () => {
  it('names the four headers after the prefix', () => {
    expect(identityHeaderNames()).toEqual({
      userEmail: 'x-deskpilot-user-email',
      projectKey: 'x-deskpilot-project-key',
      clientId: 'x-deskpilot-client-id',
      role: 'x-deskpilot-role',
    });
    expect(identityHeaderNames({ prefix: 'Studio' }).role).toBe('x-studio-role');
  });

  it.each([
    'x-deskpilot-role',
    'X-DESKPILOT-PROJECT-KEY',
    'x_deskpilot_project_key',
    'X_Deskpilot-Client_Id',
    'x-deskpilot-anything-new',
    ' x-deskpilot-role',
  ])('recognises %j as an identity header', (name) => expect(isIdentityHeader(name)).toBe(true));

  it.each([
    'x-deskpilotrole',
    'deskpilot-role',
    'x-other-role',
    'x-deskpilo-role',
    'accept',
    'x-forwarded-for',
    'x-forwarded-proto',
    'x-request-id',
    'user-agent',
    'x-msclient-principal',
  ])('leaves %j alone', (name) => expect(isIdentityHeader(name)).toBe(false));

  it.each([
    // oauth2-proxy, nginx auth_request, Traefik forwardAuth
    'X-Forwarded-User',
    'X-Forwarded-Email',
    'X-Forwarded-Preferred-Username',
    'X-Forwarded-Groups',
    'X-Forwarded-Access-Token',
    'X-Auth-Request-User',
    'X-Auth-Request-Email',
    'X-Auth-Request-Access-Token',
    'X-Auth-Request-Anything-Later',
    'GAP-Auth',
    // Authelia, CGI-style and Kubernetes front proxies, Grafana, Kong
    'Remote-User',
    'Remote-Groups',
    'Remote-Email',
    'Remote-Name',
    'X-Remote-User',
    'X-Remote-Group',
    'X-Remote-Groups',
    'X-Remote-Extra-Scopes',
    'X-WebAuth-User',
    'X-Authenticated-User',
    'X-Authenticated-Userid',
    'X-Consumer-Username',
    // Azure App Service, Google IAP, AWS ALB, Cloudflare Access, Pomerium, authentik, Vouch, Tailscale
    'X-MS-CLIENT-PRINCIPAL',
    'X-MS-CLIENT-PRINCIPAL-NAME',
    'X-MS-TOKEN-AAD-ID-TOKEN',
    'X-Goog-Authenticated-User-Email',
    'X-Goog-IAP-JWT-Assertion',
    'X-Amzn-Oidc-Identity',
    'X-Amzn-Oidc-Data',
    'Cf-Access-Authenticated-User-Email',
    'Cf-Access-Jwt-Assertion',
    'X-Pomerium-Jwt-Assertion',
    'X-Pomerium-Claim-Email',
    'X-authentik-username',
    'X-Vouch-User',
    'Tailscale-User-Login',
    // Credentials and client certificates
    'Authorization',
    'X-Forwarded-Client-Cert',
    'Client-Cert',
    'X-SSL-Client-DN',
    'X-ARR-ClientCert',
  ])('treats %j as identity by default, in any case and with _ for -', (name) => {
    expect(isIdentityHeader(name)).toBe(true);
    expect(isIdentityHeader(name.toUpperCase().replaceAll('-', '_'))).toBe(true);
    expect(isIdentityHeader(name.toLowerCase())).toBe(true);
  });

  it('strips forged spellings, hop-by-hop headers, and stamps the session', () => {
    const out = downstreamHeaders(
      {
        'x-deskpilot-project-key': 'acme-b2c, acme-b2b',
        x_deskpilot_role: 'admin',
        'x-deskpilot-user-email': ['alice@example.com', 'alice@example.com'],
        connection: 'keep-alive, x-secret-hop',
        'x-secret-hop': '1',
        'transfer-encoding': 'chunked',
        host: 'studio.example.com',
        accept: 'application/json',
        cookie: 'theme=dark',
      },
      session,
    );
    expect(out).toEqual({ accept: 'application/json', cookie: 'theme=dark', ...stamped });
  });

  it("never forwards the session cookie, and keeps the page's other cookies byte for byte", () => {
    const cookieOf = (cookie: string | string[], prefix?: string) =>
      downstreamHeaders({ cookie }, session, { prefix }).cookie;
    const token = 'AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
    expect(cookieOf(`deskpilot_session=${token}`)).toBeUndefined();
    expect(cookieOf(`theme=dark; deskpilot_session=${token}; analytics="a%20b=c"`)).toBe(
      'theme=dark; analytics="a%20b=c"',
    );
    expect(cookieOf(`deskpilot_session=${token}; theme=dark`)).toBe('theme=dark');
    expect(cookieOf(`theme=dark;deskpilot_session=${token}`)).toBe('theme=dark');
    // Every occurrence: a sibling subdomain can add a second cookie of the same name.
    expect(cookieOf(`deskpilot_session=one; a=1; deskpilot_session=two; b=2;  deskpilot_session =three`)).toBe(
      'a=1; b=2',
    );
    expect(cookieOf(['a=1', `deskpilot_session=${token}`, 'b=2'])).toBe('a=1; b=2');
    expect(cookieOf(['deskpilot_session=x', 'deskpilot_session=y'])).toBeUndefined();
    // Untouched when there is nothing to strip: the header is forwarded exactly as sent.
    expect(cookieOf('a=1;b=2;  c="x y"')).toBe('a=1;b=2;  c="x y"');
    expect(cookieOf(['a=1', 'b=2'])).toEqual(['a=1', 'b=2']);
    // Cookie names are case-sensitive and whole: other cookies stay.
    expect(
      cookieOf(`Deskpilot_Session=x; deskpilot_session_old=y; my_deskpilot_session=z; deskpilot_session=${token}`),
    ).toBe('Deskpilot_Session=x; deskpilot_session_old=y; my_deskpilot_session=z');
    // The prefix names the cookie.
    expect(cookieOf(`acme_session=${token}; deskpilot_session=kept`, 'acme')).toBe('deskpilot_session=kept');
  });

  it.each([
    'deskpilot_session=a.b',
    ' deskpilot_session=a.b ',
    '\tdeskpilot_session\t=\ta.b',
    ';deskpilot_session=a.b;',
    'x=1;;deskpilot_session=a.b;;y=2',
    'x; deskpilot_session=a.b',
    'deskpilot_session=a.b; deskpilot_session=c.d',
    'x="deskpilot_session=1"; deskpilot_session=a.b',
  ])('leaves nothing a cookie parser reads as the session in %j', (header) => {
    const cookie = downstreamHeaders({ cookie: header }, session).cookie;
    expect(parseCookie(header).deskpilot_session).toBeDefined();
    expect(cookie === undefined || parseCookie(String(cookie)).deskpilot_session === undefined).toBe(true);
  });

  it('strips the default deny list in every spelling, repeated or as arrays', () => {
    const out = downstreamHeaders(
      {
        'x-forwarded-user': 'alice',
        x_forwarded_user: 'alice',
        'x-auth-request-email': ['alice@example.com', 'alice@example.com'],
        'remote-user': 'alice',
        remote_user: 'alice',
        'x-ms-client-principal-name': 'alice',
        'cf-access-authenticated-user-email': 'alice@example.com',
        authorization: 'Bearer stolen',
        'x-forwarded-for': '203.0.113.7',
        'x-request-id': 'r-1',
      },
      session,
    );
    expect(out).toEqual({ 'x-forwarded-for': '203.0.113.7', 'x-request-id': 'r-1', ...stamped });
  });

  it('lets users extend or replace the deny list; the x-<prefix>-* namespace stays reserved either way', () => {
    const incoming = {
      'x-tenant-user': 'alice',
      x_tenant_admin: '1',
      'x-forwarded-user': 'alice',
      'x-deskpilot-role': 'admin',
      'x-keep': 'yes',
    };
    const extended = downstreamHeaders(incoming, session, { deniedHeaders: [...defaultDeniedHeaders, 'X_Tenant_*'] });
    expect(Object.keys(extended).sort()).toEqual(['x-keep', ...Object.keys(stamped)].sort());
    const replaced = downstreamHeaders(incoming, session, { deniedHeaders: ['x-tenant-user'] });
    expect(replaced).toEqual({ x_tenant_admin: '1', 'x-forwarded-user': 'alice', 'x-keep': 'yes', ...stamped });
    expect(isIdentityHeader('x-deskpilot-role', { deniedHeaders: [] })).toBe(true);
  });

  it.each([[''], ['*'], ['x-*-user'], ['x user'], ['x-user**']])('refuses the deny-list entry %j', (entry) => {
    expect(() => downstreamHeaders({}, session, { deniedHeaders: [entry] })).toThrow(TypeError);
  });

  it('stamps exactly four headers', () => {
    expect(stampIdentityHeaders(session, { prefix: 'acme' })).toHaveLength(4);
  });
});
