import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { spawnExample } from '../../test-support/spawn-example.ts';

const servers = {
  session: fileURLToPath(new URL('../../session-server/src/server.ts', import.meta.url)),
  chat: fileURLToPath(new URL('../src/server.ts', import.meta.url)),
};

describe('GET /openapi.json on the reference servers', () => {
  it.each(['session', 'chat'] as const)(
    'the %s server serves a valid OpenAPI 3.1 document, the one committed under docs/openapi',
    async (name) => {
      const server = await spawnExample(servers[name]);
      const response = await fetch(`${server.url}/openapi.json`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const served = (await response.json()) as { paths: Record<string, unknown> };
      expect((await new Validator().validate(served)).valid).toBe(true);
      const committed = JSON.parse(
        readFileSync(new URL(`../../../docs/openapi/${name}.json`, import.meta.url), 'utf8'),
      ) as typeof served;
      // The server documents the routes it serves: those of the modules its configuration gives it
      // (the session server's default: no email, no single sign-on, no step-up), each as committed.
      expect({ ...served, paths: {} }).toEqual({ ...committed, paths: {} });
      expect(Object.keys(served.paths).length).toBeGreaterThan(name === 'session' ? 20 : 6);
      for (const [path, operations] of Object.entries(served.paths))
        expect(operations, path).toEqual(committed.paths[path]);
      if (name === 'chat') expect(Object.keys(served.paths)).toEqual(Object.keys(committed.paths));
    },
  );
});
