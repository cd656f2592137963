import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { writeFetchResponse, writeHttpResponse, type NodeResponseLike } from './node-http.js';

/** A Node response as `http` leaves it: `write` answers false once the socket is gone, and `drain` never comes. */
class FakeResponse extends EventEmitter implements NodeResponseLike {
  statusCode = 200;
  headersSent = false;
  destroyed = false;
  written: Uint8Array[] = [];
  ended = false;
  headers = new Map<string, string | string[]>();
  setHeader(name: string, value: string | string[]) {
    this.headers.set(name, value);
    return this;
  }
  write(chunk: Uint8Array) {
    if (this.destroyed) return false;
    this.written.push(chunk);
    return true;
  }
  end() {
    this.ended = true;
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
  return { response: new Response(body), cancelled: () => cancelled, pulls: () => pulls };
}

describe('writeFetchResponse', () => {
  it('streams the body and ends the response', async () => {
    const res = new FakeResponse();
    await writeFetchResponse(res, new Response('hello'));
    expect(Buffer.concat(res.written).toString()).toBe('hello');
    expect(res.ended).toBe(true);
  });

  it('cancels the body at once when the client left before the response was written', async () => {
    const res = new FakeResponse();
    // The client went away while the handler was still working: `close` has fired and will not fire again.
    res.leave();
    const body = endlessBody();
    await writeFetchResponse(res, body.response);
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
    const writing = writeFetchResponse(res, body.response);
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
    await writeFetchResponse(res, body.response);
    expect(body.cancelled()).toBe(true);
  });
});

describe('writeHttpResponse', () => {
  it('writes a string body with its status and headers, repeated headers kept apart', async () => {
    const res = new FakeResponse();
    let ended: unknown;
    res.end = (chunk?: string) => ((ended = chunk), (res.ended = true), res);
    await writeHttpResponse(res, { status: 201, headers: [['content-type', 'application/json'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2']], body: '{}' });
    expect(res.statusCode).toBe(201);
    expect(Object.fromEntries(res.headers)).toEqual({ 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
    expect(ended).toBe('{}');
  });

  it('streams a ReadableStream body, and cancels it when the client leaves', async () => {
    const res = new FakeResponse();
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('data: 1\n\n'));
        controller.enqueue(encoder.encode('data: 2\n\n'));
        controller.close();
      },
    });
    await writeHttpResponse(res, { status: 200, headers: [['content-type', 'text/event-stream']], body });
    expect(Buffer.concat(res.written).toString()).toBe('data: 1\n\ndata: 2\n\n');
    expect(res.ended).toBe(true);

    const left = new FakeResponse();
    left.leave();
    const endless = endlessBody();
    await writeHttpResponse(left, { status: 200, headers: [], body: endless.response.body! });
    expect(endless.cancelled()).toBe(true);
  });
});
