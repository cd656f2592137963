import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import Provider from 'oidc-provider';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { createMcpToolSource } from './create-mcp-tool-source.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A free loopback server, listening, and its origin. */
async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A real authorization server (`oidc-provider`) that issues JWT access tokens for `resource` by client credentials. */
async function startAuthorizationServer(resource: () => string) {
  const server = createServer();
  const issuer = await listen(server);
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    clients: [
      {
        client_id: 'deskpilot-chat',
        client_secret: 'client-secret-of-the-chat-service',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['articles:read'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource(),
        useGrantedResource: () => true,
        getResourceServerInfo: (_context, indicator) => {
          if (indicator !== resource()) throw new Error('unknown resource');
          return {
            scope: 'articles:read',
            audience: indicator,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  });
  const tokens: string[] = [];
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url === '/token') res.on('finish', () => tokens.push(String(res.statusCode)));
    callback(req, res);
  });
  return { issuer, tokens };
}

/** An MCP server that answers only with a bearer token its authorization server signed for it (RFC 9728 metadata). */
async function startProtectedMcpServer(issuer: () => string) {
  const seen: Array<string | undefined> = [];
  const server = createServer();
  const origin = await listen(server);
  const resource = `${origin}/mcp`;
  const keys = () => createRemoteJWKSet(new URL(`${issuer()}/jwks`));
  const authorized = async (req: IncomingMessage) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    seen.push(token && 'bearer');
    if (!token) return false;
    try {
      await jwtVerify(token, keys(), { issuer: issuer(), audience: resource });
      return true;
    } catch {
      return false;
    }
  };
  server.on('request', async (req, res) => {
    if (req.url === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ resource, authorization_servers: [issuer()] }));
      return;
    }
    if (!(await authorized(req))) {
      res.writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      });
      res.end();
      return;
    }
    const mcp = new McpServer({ name: 'billing', version: '1.0.0' });
    mcp.registerTool('getInvoice', { inputSchema: { invoiceId: z.string() } }, async ({ invoiceId }) => ({
      content: [{ type: 'text', text: `Invoice ${invoiceId}: paid` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void mcp.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  return { resource, seen };
}

/** The billing server, its authorization server, and a source whose credentials name `issuer` (default: that server). */
async function billingWithOAuth(issuerOf: (authorizationServer: string) => string = (issuer) => issuer) {
  let issuer = '';
  const billing = await startProtectedMcpServer(() => issuer);
  const authorization = await startAuthorizationServer(() => billing.resource);
  issuer = authorization.issuer;
  const errors: unknown[] = [];
  const source = createMcpToolSource({
    servers: [
      {
        name: 'billing',
        url: billing.resource,
        projects: '*',
        oauth: {
          clientId: 'deskpilot-chat',
          clientSecret: 'client-secret-of-the-chat-service',
          issuer: issuerOf(authorization.issuer),
        },
        tools: { getInvoice: { readOnly: true } },
      },
    ],
    onError: (error) => errors.push(error),
  });
  onTestFinished(() => source.close());
  return { billing, authorization, source, errors };
}

describe('an MCP server that asks for OAuth client credentials', () => {
  it('gets a token from the authorization server it names, sends the secret only there, and calls with the token', async () => {
    const { billing, authorization, source, errors } = await billingWithOAuth();
    const [tool] = await source.toolsFor({ projectKey: 'acme-b2c' });
    expect(errors).toEqual([]);
    expect(tool?.name).toBe('billing_getInvoice');
    expect(authorization.tokens).toEqual(['200']);
    expect(billing.seen[0]).toBeUndefined();
    expect(billing.seen.at(-1)).toBe('bearer');
    const output = await tool!.execute({ invoiceId: 'INV-7' }, {
      userEmail: 'rep@example.com',
      projectKey: 'acme-b2c',
    } as never);
    expect(output).toMatchObject({ content: 'Invoice INV-7: paid' });
  });

  it('refuses to send the credentials to an authorization server other than the configured issuer', async () => {
    const { authorization, source, errors } = await billingWithOAuth(() => 'https://auth.elsewhere.example');
    expect(await source.toolsFor({ projectKey: 'acme-b2c' })).toEqual([]);
    expect(authorization.tokens).toEqual([]);
    expect(errors).toHaveLength(1);
  });
});
