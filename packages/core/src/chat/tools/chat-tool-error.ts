/**
 * An error whose message is safe to show to the model and the user (e.g. "Order ORD-9 was not
 * found."). Any other error thrown by a tool is reported as a generic failure, so internals never
 * reach the stream.
 */
export class ChatToolError extends Error {
  override readonly name = 'ChatToolError';
}

/** The safe text of a tool failure. */
export function safeToolErrorMessage(error: unknown): string {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof ChatToolError) return current.message;
  }
  return 'The tool failed. Please try again later.';
}
