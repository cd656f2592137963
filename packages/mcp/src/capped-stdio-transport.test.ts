import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CappedStdioClientTransport } from './capped-stdio-transport.js';
import { McpResponseTooLargeError } from './limited-fetch.js';

/** A transport on a child that runs `script` (Node), with its answers and errors as they arrive. */
async function started(script: string, maxLineBytes: number) {
  const transport = new CappedStdioClientTransport(
    { command: process.execPath, args: ['-e', script], env: { PATH: process.env.PATH ?? '' } },
    maxLineBytes,
  );
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  transport.onmessage = (message) => void messages.push(message);
  transport.onerror = (error) => void errors.push(error);
  await transport.start();
  return { transport, messages, errors, closed };
}

const message = (id: number, text = 'x') => JSON.stringify({ jsonrpc: '2.0', id, result: { text } });

describe('CappedStdioClientTransport', () => {
  it('reads each line as one message: several in one chunk, one over several chunks, CRLF endings', async () => {
    const script = `
      const write = (text) => new Promise((resolve) => process.stdout.write(text, resolve));
      (async () => {
        await write(${JSON.stringify(`${message(1)}\n${message(2)}\r\n${message(3).slice(0, 10)}`)});
        await new Promise((resolve) => setTimeout(resolve, 50));
        await write(${JSON.stringify(`${message(3).slice(10)}\n`)});
      })();`;
    const { messages, errors, closed } = await started(script, 1024);
    await closed;
    expect(messages.map((answer) => (answer as { id: number }).id)).toEqual([1, 2, 3]);
    expect(errors).toEqual([]);
  });

  it('keeps a line of exactly the cap; one byte more is never kept, and the child is ended at once', async () => {
    const fits = message(1, 'a'.repeat(100));
    const within = await started(`process.stdout.write(${JSON.stringify(`${fits}\n`)})`, Buffer.byteLength(fits));
    await within.closed;
    expect(within.messages).toHaveLength(1);
    expect(within.transport.overflow).toBeNull();

    // A child that would go on writing for a minute: ended at the cap, not when it is done.
    const endless = `
      const piece = 'a'.repeat(64 * 1024);
      process.stdout.write('{"jsonrpc":"2.0","id":1,"result":{"text":"');
      setInterval(() => process.stdout.write(piece), 10);`;
    const past = await started(endless, 256 * 1024);
    await past.closed;
    expect(past.messages).toEqual([]);
    expect(past.errors).toEqual([expect.any(McpResponseTooLargeError)]);
    expect(past.transport.overflow).toMatchObject({ maxBytes: 256 * 1024 });
  });

  it('sends each message as one line, and fails a send once the child is gone', async () => {
    const echo = `process.stdin.on('data', (chunk) => process.stdout.write(chunk)); process.stdin.on('end', () => process.exit(0));`;
    const { transport, messages, closed } = await started(echo, 1024);
    await transport.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
    await expect.poll(() => messages).toEqual([{ jsonrpc: '2.0', id: 7, method: 'ping' }]);
    await transport.close();
    await closed;
    await expect(transport.send({ jsonrpc: '2.0', id: 8, method: 'ping' })).rejects.toThrow(/Not connected/);
  });

  it('reports a command that cannot start', async () => {
    const transport = new CappedStdioClientTransport(
      { command: 'deskpilot-no-such-command', env: { PATH: process.env.PATH ?? '' } },
      1024,
    );
    const failed = transport.start();
    await expect(failed).rejects.toThrow(/ENOENT/);
  });
});
