import { describe, expect, it } from 'vitest';
import { fromFetchRequest, fromFetchResponse, toFetchResponse } from './http-request.js';

describe('fetch translation', () => {
  it('writes string and streamed bodies as a fetch Response, repeated headers kept', async () => {
    const text = toFetchResponse({
      status: 201,
      headers: [
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ],
      body: '{}',
    });
    expect([text.status, await text.text(), text.headers.getSetCookie()]).toEqual([201, '{}', ['a=1', 'b=2']]);
    const streamed = toFetchResponse({ status: 200, headers: [], body: new Response('chunked').body });
    expect(await streamed.text()).toBe('chunked');
    expect(toFetchResponse({ status: 204, headers: [], body: null }).body).toBeNull();
  });

  it('reads a fetch Response with its body still a stream and each Set-Cookie apart', async () => {
    const headers = new Headers([
      ['content-type', 'text/plain'],
      ['set-cookie', 'a=1; Expires=Thu, 01 Jan 2099 00:00:00 GMT'],
      ['set-cookie', 'b=2'],
    ]);
    const response = fromFetchResponse(new Response('hello', { status: 207, headers }));
    expect(response.status).toBe(207);
    expect(response.headers).toEqual([
      ['content-type', 'text/plain'],
      ['set-cookie', 'a=1; Expires=Thu, 01 Jan 2099 00:00:00 GMT'],
      ['set-cookie', 'b=2'],
    ]);
    expect(response.body).toBeInstanceOf(ReadableStream);
    expect(await toFetchResponse(response).text()).toBe('hello');
  });

  it("carries the Request's signal, so a client that leaves can be seen", () => {
    const controller = new AbortController();
    const request = fromFetchRequest(new Request('http://studio.example/sessions', { signal: controller.signal }), {
      clientAddress: '203.0.113.1',
    });
    expect(request.signal?.aborted).toBe(false);
    controller.abort();
    expect(request.signal?.aborted).toBe(true);
  });
});
