// Fault suite, the disk fills while serving (PGlite on a small tmpfs): every turn confirmed to the
// client is in history after space is freed and the server restarted; the others were told they failed.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { countLost, isConfirmed, postJson, readChunks, turnBody } from '../../test-support/chat-client.ts';
import { seedEmbeddedDatabases } from '../../test-support/pglite-template.ts';
import { exitCode, spawnExample } from '../../test-support/spawn-example.ts';
import { smallDisk, smallDiskUnavailable } from '../../test-support/tmpfs.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));

describe.skipIf(smallDiskUnavailable)(
  `chat server when the disk fills while serving${smallDiskUnavailable ? ` (SKIPPED: ${smallDiskUnavailable})` : ''}`,
  () => {
    it('confirms only turns it saved, tells the client about the others, and loses none it confirmed', async () => {
      const disk = smallDisk(64 * 1024 * 1024);
      const dataDir = join(disk.path, 'data');
      await seedEmbeddedDatabases(dataDir, ['chat']);
      const server = await spawnExample(serverFile, { DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000' });
      const before = turnBody('show order ORD-1001');
      expect(isConfirmed(await readChunks(await postJson(server.url, '/chat', before)))).toBe(true);

      disk.fill();
      const outcomes: Array<{ body: ReturnType<typeof turnBody>; outcome: 'confirmed' | 'told' | 'refused' }> = [];
      for (let index = 0; index < 30; index++) {
        const body = turnBody(`show order ORD-100${index % 3}`);
        const response = await postJson(server.url, '/chat', body);
        if (response.status !== 200) {
          expect(response.status).toBe(503);
          expect(response.headers.get('content-type')).toBe('application/problem+json');
          await response.body?.cancel();
          outcomes.push({ body, outcome: 'refused' });
          continue;
        }
        const chunks = await readChunks(response);
        // Told: an `error` part, or a stream that ends without `finish`.
        outcomes.push({ body, outcome: isConfirmed(chunks) ? 'confirmed' : 'told' });
      }
      disk.unfill();

      server.child.kill('SIGTERM');
      await exitCode(server.child);
      const restarted = await spawnExample(serverFile, { DATA_DIR: dataDir });
      const confirmed = [
        before,
        ...outcomes.filter((entry) => entry.outcome === 'confirmed').map((entry) => entry.body),
      ];
      const { lost, reasons } = await countLost(restarted.url, confirmed);
      const count = (outcome: string) => outcomes.filter((entry) => entry.outcome === outcome).length;
      console.info(
        `[fault figures] disk full while serving (PGlite): ${outcomes.length} turns tried on a full disk, ${count('confirmed')} confirmed, ${count('told')} told they failed, ${count('refused')} refused 503; ${lost} confirmed turns lost`,
      );
      expect(reasons).toEqual([]);
      // The fault did happen: the full disk refused some of the work.
      expect(count('confirmed')).toBeLessThan(outcomes.length);
    }, 60_000);
  },
);
