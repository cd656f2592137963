import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { writeResponse, type NodeResponseLike } from './write-response.js';

/** A Node response as `http` leaves it: `write` answers false once the socket is gone, and `drain` never comes. */
class FakeResponse extends EventEmitter implements NodeResponseLike {
  statusCode = 200;
  destroyed = false;
  headers = new Map<string, string | string[]>();
  written: Uint8Array[] = [];
  ended: string | boolean = false;
  setHeader(name: string, value: string | string[]) {
    this.headers.set(name, value);
    return this;
  }
  write(chunk: Uint8Array) {
    if (this.destroyed) return false;
    this.written.push(chunk);
    return true;
  }
  end(chunk?: string) {
    this.ended = chunk ?? true;
    return this;
  }
  destroy() {
    this.destroyed = true;
    return this;
  }
  /** The client leaves: the socket is destroyed, then `close` is emitted once. */
  leave() {
    this.destroyed = true;
    this.emit('close');
  }
}

/** A body that never ends on its own and records whether it was cancelled. */
function endlessBody() {
  const encoder = new TextEncoder();
  let cancelled = false;
  let pulls = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulls++;
        controller.enqueue(encoder.encode(`data: ${pulls}\n\n`));
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { response: streamed(body), cancelled: () => cancelled, pulls: () => pulls };
}

const streamed = (body: ReadableStream<Uint8Array>) => ({ status: 200, headers: [], body });

describe('writeResponse', () => {
  it('writes status, headers and a string body, each Set-Cookie its own line', async () => {
    const res = new FakeResponse();
    await writeResponse(res, {
      status: 201,
      headers: [
        ['content-type', 'application/json'],
        ['set-cookie', 'a=1'],
        ['Set-Cookie', 'b=2'],
      ],
      body: '{}',
    });
    expect(res.statusCode).toBe(201);
    expect(Object.fromEntries(res.headers)).toEqual({
      'content-type': 'application/json',
      'set-cookie': ['a=1', 'b=2'],
    });
    expect(res.ended).toBe('{}');
  });

  it('ends a response without a body', async () => {
    const res = new FakeResponse();
    await writeResponse(res, { status: 204, headers: [], body: null });
    expect([res.statusCode, res.ended, res.written]).toEqual([204, true, []]);
  });

  it('streams the body and ends the response', async () => {
    const res = new FakeResponse();
    await writeResponse(res, streamed(new Response('hello').body!));
    expect(Buffer.concat(res.written).toString()).toBe('hello');
    expect(res.ended).toBe(true);
  });

  it('destroys the response, never ends it, when the body fails mid-stream', async () => {
    const res = new FakeResponse();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"partial":'));
        controller.error(new Error('upstream cut'));
      },
    });
    await writeResponse(res, streamed(body));
    expect(res.destroyed).toBe(true);
    expect(res.ended).toBe(false);
  });

  it('cancels the body at once when the client left before the response was written', async () => {
    const res = new FakeResponse();
    // The client went away while the handler was still working: `close` has fired and will not fire again.
    res.leave();
    const body = endlessBody();
    await writeResponse(res, body.response);
    expect(body.cancelled()).toBe(true);
    expect(res.written).toEqual([]);
  });

  it('cancels the body when the client leaves mid-stream, also while waiting for drain', async () => {
    const res = new FakeResponse();
    const body = endlessBody();
    let writes = 0;
    res.write = (chunk) => {
      res.written.push(chunk);
      // The second chunk fills the socket buffer: the writer must wait for `drain` or `close`.
      return ++writes < 2;
    };
    const writing = writeResponse(res, body.response);
    await expect.poll(() => res.written.length).toBe(2);
    res.leave();
    await writing;
    expect(body.cancelled()).toBe(true);
    expect(res.ended).toBe(false);
  });

  it('never waits for drain on a response destroyed without a close event yet', async () => {
    const res = new FakeResponse();
    const body = endlessBody();
    // Destroyed between two writes, its `close` still to come on a later tick.
    res.write = (chunk) => {
      res.written.push(chunk);
      res.destroyed = true;
      setImmediate(() => res.emit('close'));
      return false;
    };
    await writeResponse(res, body.response);
    expect(body.cancelled()).toBe(true);
  });
});
