// Same in every copy of this module, so a tool built against another copy of @deskpilot/core still
// has its safe message shown (see DeskpilotError's brand).
const chatToolErrorBrand = Symbol.for('deskpilot.chat-tool-error');

/**
 * An error whose message is safe to show to the model and the user (e.g. "Order ORD-9 was not
 * found."). Any other error thrown by a tool is reported as a generic failure, so internals never
 * reach the stream.
 */
export class ChatToolError extends Error {
  /** True when `value` is a `ChatToolError` made by any copy of `@deskpilot/core`: use it instead of `instanceof`. */
  static isInstance(value: unknown): value is ChatToolError {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[chatToolErrorBrand] === true
    );
  }

  // On the prototype and out of the declared type: no own property for deep equality to compare, and
  // the types of two copies stay compatible.
  static {
    Object.defineProperty(this.prototype, chatToolErrorBrand, { value: true });
  }

  override readonly name = 'ChatToolError';
}

/** The safe text of a tool failure. */
export function safeToolErrorMessage(error: unknown): string {
  for (
    let current: unknown = error, depth = 0;
    current instanceof Error && depth < 5;
    current = current.cause, depth++
  ) {
    if (ChatToolError.isInstance(current)) return current.message;
  }
  return 'The tool failed. Please try again later.';
}
