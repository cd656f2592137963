import type { ChildProcess } from 'node:child_process';
// What the SDK's own stdio transport spawns with: Windows' `.cmd` shims (`npx`) start too.
import spawn from 'cross-spawn';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { McpResponseTooLargeError } from './limited-fetch.js';

/** How to start the child: its environment already merged. */
export interface CappedStdioParameters {
  command: string;
  args?: string[] | undefined;
  env: Record<string, string>;
  cwd?: string | undefined;
}

/**
 * The client side of MCP over stdio, reading the child's answers with a byte cap: each line (one
 * message) is counted as it streams in, and one that would pass `maxLineBytes` is never kept — the
 * child is ended at once, nothing more of it is read, and `overflow` says why the pending requests
 * fail. A line under the cap is copied once, when it is whole (the SDK's `ReadBuffer` copies the
 * whole buffer again for every 64 KiB chunk).
 */
export class CappedStdioClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Set once a line passed the cap: the child was ended for it. */
  overflow: McpResponseTooLargeError | null = null;
  readonly #parameters: CappedStdioParameters;
  readonly #maxLineBytes: number;
  #child: ChildProcess | undefined;
  #pieces: Buffer[] = [];
  #lineBytes = 0;

  constructor(parameters: CappedStdioParameters, maxLineBytes: number) {
    this.#parameters = parameters;
    this.#maxLineBytes = maxLineBytes;
  }

  start(): Promise<void> {
    if (this.#child) throw new Error('CappedStdioClientTransport already started');
    return new Promise((resolve, reject) => {
      const { command, args, env, cwd } = this.#parameters;
      const child = spawn(command, args ?? [], {
        env,
        cwd,
        stdio: ['pipe', 'pipe', 'ignore'],
        shell: false,
        windowsHide: true,
      });
      this.#child = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        this.#child = undefined;
        this.#pieces = [];
        this.onclose?.();
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => this.#read(chunk));
    });
  }

  #read(chunk: Buffer) {
    let start = 0;
    while (!this.overflow && start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      // Counted before it is kept: a line never holds more than the cap.
      if (this.#lineBytes + (end - start) > this.#maxLineBytes) return this.#tooLarge();
      if (end > start) {
        this.#pieces.push(chunk.subarray(start, end));
        this.#lineBytes += end - start;
      }
      if (newline === -1) return;
      const line = this.#pieces.length === 1 ? this.#pieces[0]! : Buffer.concat(this.#pieces, this.#lineBytes);
      this.#pieces = [];
      this.#lineBytes = 0;
      start = newline + 1;
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line.toString('utf8').replace(/\r$/, ''));
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      this.onmessage?.(message);
    }
  }

  /** A line past the cap: dropped, the child's output closed and the child ended (its `close` fails what is pending). */
  #tooLarge() {
    this.overflow = new McpResponseTooLargeError(this.#maxLineBytes);
    this.#pieces = [];
    this.#lineBytes = 0;
    this.#child?.stdout?.destroy();
    this.#child?.kill('SIGKILL');
    this.onerror?.(this.overflow);
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const wait = (ms: number) =>
      Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
    const running = () => child.exitCode === null && child.signalCode === null;
    child.stdin?.end();
    await wait(2_000);
    if (running()) {
      child.kill('SIGTERM');
      await wait(2_000);
    }
    if (running()) child.kill('SIGKILL');
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#child?.stdin;
      if (!stdin) return reject(new Error('Not connected'));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }
}
