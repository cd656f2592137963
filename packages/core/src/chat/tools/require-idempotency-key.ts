import type { ChatToolContext } from './chat-tool.js';

/**
 * The idempotency key of an approved write. A write tool run without one would not be replay-safe, so
 * it fails closed: this is a wiring bug, never something the model can cause.
 */
export function requireIdempotencyKey(context: ChatToolContext, toolName: string): string {
  const key = context.idempotencyKey;
  if (typeof key !== 'string' || key.length === 0) {
    throw new Error(`${toolName} is a write tool and runs only with an idempotency key (the approval id).`);
  }
  return key;
}
