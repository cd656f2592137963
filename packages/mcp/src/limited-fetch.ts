/** Why a call failed: its server answered with more bytes than it may. */
export class McpResponseTooLargeError extends Error {
  override readonly name = 'McpResponseTooLargeError';
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`The MCP server's answer is larger than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

/**
 * `fetch` whose answers fail once one passes `maxBytes`: the body is counted as it streams in, so a
 * 10 MB answer is cut at the limit, never held whole — a call's answer (POST), and the event stream a
 * result may come back on (GET) alike.
 */
export function limitedFetch(maxBytes: number, fetchImpl: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (!response.body) return response;
    let received = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          received += chunk.byteLength;
          if (received > maxBytes) controller.error(new McpResponseTooLargeError(maxBytes));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
