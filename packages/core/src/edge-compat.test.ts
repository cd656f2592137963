import { EdgeVM } from '@edge-runtime/vm';
import { build, type Plugin } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

// The README says core's handlers run on any fetch-based host. The `edge-runtime` vitest project runs
// the handler suites with the Edge Runtime's Web globals, but Node's built-ins stay importable there.
// This test closes that gap: it bundles core's root entry as a browser or worker bundler would, lists
// every `node:` import left in it, and runs the bundle in a bare V8 context that has Web globals only
// (no `Buffer`, `process`, `require` or dynamic `import`).

// The root entry, plus three internals of its graph the test drives directly (a session made without
// a login, as scrypt is missing there; the address resolver alone): they add no module to the graph.
const entry = `export * from './index.ts';
export { createSecretHasher, createSessionToken } from './session/session-token.ts';
export { createClientAddressResolver } from './http/create-client-address-resolver.ts';`;
const sourceRoot = fileURLToPath(new URL('.', import.meta.url));

/** Web Crypto has no scrypt: password hashing imports node:crypto when a password is hashed, never before. */
const allowedDynamic = ['session/password.ts -> node:crypto'];

/** Static `node:` imports allowed in core's root graph: none. */
const pendingStatic: string[] = [];

/**
 * Core files in the root graph that may name Node globals: scrypt's hashes are decoded with `Buffer`
 * (only where node:crypto loaded, and those hosts have it); the hash gate reads libuv's
 * `UV_THREADPOOL_SIZE` from `process.env` where there is one (optional chaining elsewhere); the
 * session secret's digest uses `process.getBuiltinModule('node:crypto')` where there is one.
 */
const allowedNodeGlobals = ['session/create-hash-gate.ts', 'session/password.ts', 'session/session-token.ts'];

interface NodeImport {
  edge: string;
  kind: string;
}

/** Bundles core's root entry for a browser target, recording each `node:` import instead of resolving it. */
async function bundleCore() {
  const found: NodeImport[] = [];
  const recordNodeImports: Plugin = {
    name: 'record-node-imports',
    setup(builder) {
      builder.onResolve({ filter: /^node:/ }, (args) => {
        const edge = `${args.importer.slice(sourceRoot.length)} -> ${args.path}`;
        found.push({ edge, kind: args.kind });
        if (args.kind === 'dynamic-import') return { path: args.path, external: true };
        // A stand-in that fails only when used, so the rest of the bundle can still be evaluated.
        return { path: args.path, namespace: 'missing-node-builtin' };
      });
      builder.onLoad({ filter: /.*/, namespace: 'missing-node-builtin' }, (args) => ({
        // CommonJS, so any named import binds; each export throws when called.
        contents: `module.exports = new Proxy({}, { get: (_target, name) => name === '__esModule' ? false : () => {
          throw new Error(${JSON.stringify(`${args.path} is not available on this host`)});
        } });`,
        loader: 'js',
      }));
    },
  };
  const result = await build({
    stdin: { contents: entry, resolveDir: sourceRoot, sourcefile: 'edge-entry.ts', loader: 'ts' },
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'iife',
    globalName: 'deskpilotCore',
    target: 'es2022',
    logLevel: 'silent',
    plugins: [recordNodeImports],
    metafile: true,
  });
  const coreFiles = Object.keys(result.metafile.inputs).filter(
    (path) => (path.startsWith('src/') || path.startsWith('packages/core/src/')) && !path.endsWith('edge-entry.ts'),
  );
  return { found, coreFiles, code: result.outputFiles[0]!.text };
}

describe('core on a host without Node built-ins', () => {
  let bundle: Awaited<ReturnType<typeof bundleCore>>;
  beforeAll(async () => {
    bundle = await bundleCore();
  }, 60_000);

  it('imports node: modules only where listed: none statically but the pending ones, node:crypto lazily for scrypt', () => {
    const edges = (kind: (value: string) => boolean) =>
      [...new Set(bundle.found.filter((item) => kind(item.kind)).map((item) => item.edge))].sort();
    expect(edges((kind) => kind === 'dynamic-import')).toEqual(allowedDynamic);
    expect(edges((kind) => kind !== 'dynamic-import')).toEqual(pendingStatic);
  });

  it('names no Node global (Buffer, process, setImmediate) in its own code but where listed', async () => {
    expect(bundle.coreFiles.length).toBeGreaterThan(50);
    const naming: string[] = [];
    for (const file of bundle.coreFiles) {
      const source = await readFile(file, 'utf8');
      // Code, not comments: `process.stdout.write` in a JSDoc example is fine.
      const code = source.replace(/\/\*[\s\S]*?\*\/|(?<!:)\/\/.*$/gm, '');
      if (/(?<![\w.$'"`/-])(Buffer|process|setImmediate|__dirname|require)(?![\w$'"`/-])/.test(code))
        naming.push(file.slice(file.indexOf('src/') + 4));
    }
    expect(naming.sort()).toEqual(allowedNodeGlobals);
  });

  describe('evaluated in a bare Edge Runtime context', () => {
    type Core = Record<string, (...args: never[]) => unknown>;
    let vm: EdgeVM;
    let core: Core;
    beforeAll(() => {
      vm = new EdgeVM();
      vm.evaluate(bundle.code);
      core = vm.evaluate('deskpilotCore') as Core;
    });

    it('has Web globals and no Node ones', () => {
      const kinds = vm.evaluate(
        '[typeof Buffer, typeof process, typeof require, typeof crypto.getRandomValues, typeof crypto.subtle, typeof Response]',
      );
      expect(kinds).toEqual(['undefined', 'undefined', 'undefined', 'function', 'object', 'function']);
    });

    it('serves the session routes: a valid cookie resolves, a forged one does not, login fails as internal without scrypt', async () => {
      const run = vm.evaluate(`(async () => {
        const core = deskpilotCore;
        const now = 1_800_000_000_000;
        const store = core.createMemorySessionStore();
        const token = core.createSessionToken();
        const hashSecret = core.createSecretHasher('pepper');
        await store.create({ id: token.id, secretHash: hashSecret(token.secret), userId: 'u1', projectKey: 'acme-b2c', clientId: 'acme',
          createdAt: now, expiresAt: now + 3_600_000, idleExpiresAt: now + 3_600_000, version: 1 });
        const account = { user: { id: 'u1', email: 'rep@example.com', name: 'Rep' }, memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }] };
        const service = core.createSessionService({
          store,
          directory: core.createMemoryUserDirectory(),
          lookup: { getSessionAndAccount: async (id) => { const record = await store.get(id); return record && { record, account }; } },
          pepper: 'pepper',
          now: () => now,
        });
        const errors = [];
        const handler = core.createSessionHandler({ service, onError: (error) => errors.push(error) });
        const info = { clientAddress: '2001:db8::1' };
        const get = (cookie) => handler.fetch(new Request('http://sessions.test/sessions/current', { headers: { cookie } }), info);
        const valid = await get('deskpilot_session=' + token.value);
        const forged = await get('deskpilot_session=' + token.id + '.' + 'A'.repeat(43));
        const login = await handler.fetch(new Request('http://sessions.test/sessions', {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'rep@example.com', password: 'x' }),
        }), info);
        return {
          valid: [valid.status, (await valid.json()).user.email],
          forged: [forged.status, (await forged.json()).code],
          login: [login.status, (await login.json()).code],
          logged: errors.map((error) => error.code + ': ' + error.cause.message),
        };
      })()`) as Promise<unknown>;
      expect(await run).toEqual({
        valid: [200, 'rep@example.com'],
        forged: [401, 'unauthenticated'],
        login: [500, 'internal'],
        logged: [
          'internal: password hashing needs node:crypto scrypt: Node, Bun, Deno, Cloudflare Workers with nodejs_compat',
        ],
      });
    });

    it('resolves client addresses behind trusted proxies there too', () => {
      expect(core).toHaveProperty('createClientAddressResolver');
      const resolve = vm.evaluate(`deskpilotCore.createClientAddressResolver({ trustedProxies: ['10.0.0.0/8'] })`) as (
        request: unknown,
      ) => string;
      const headers = vm.evaluate(`new Headers({ 'x-forwarded-for': '2001:db8::7, 10.0.0.2' })`) as unknown;
      expect(resolve({ clientAddress: '::ffff:10.1.2.3', headers })).toBe('2001:db8::7');
    });
  });
});
