import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { startPlatform } from './platform.ts';

/** The chat servers this test process started and that still run. */
const ownChatServers = () =>
  execFileSync('ps', ['-eo', 'ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.trim().startsWith(`${process.pid} `) && line.includes('examples/chat-server/src/server.ts'))
    .length;

describe('the test platform', () => {
  it('leaves no service running when one of them does not start', { timeout: 60_000 }, async () => {
    // The session service refuses to start (sign-in links without email); the chat service did start.
    await expect(startPlatform({}, { MAGIC_LINK: 'true' })).rejects.toThrow(/MAGIC_LINK=true needs email/);
    await expect.poll(ownChatServers).toBe(0);
  });
});
