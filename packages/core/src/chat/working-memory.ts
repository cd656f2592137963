import { z } from 'zod';
import type { WorkingMemory } from './chat-store.js';

/** Input of the `updateWorkingMemory` tool: keys to set and keys to remove. */
export const workingMemoryUpdateSchema = z
  .strictObject({
    set: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'Keys are short slugs like customer_name'), z.string().trim().min(1).max(1000)).optional(),
    remove: z.array(z.string().max(40)).max(50).optional(),
  })
  .describe('Keys to set and keys to remove.');

export type WorkingMemoryUpdate = z.infer<typeof workingMemoryUpdateSchema>;

/** Byte size of working memory as stored (its JSON). */
export function workingMemorySize(memory: WorkingMemory): number {
  return Buffer.byteLength(JSON.stringify(memory));
}

/**
 * Applies an update to working memory. Untouched keys are kept, so two turns that each set a note both
 * keep theirs, and an empty update changes nothing. Returns null when the result would exceed `maxBytes`.
 */
export function applyWorkingMemoryUpdate(memory: WorkingMemory, update: WorkingMemoryUpdate, maxBytes: number): WorkingMemory | null {
  const next: WorkingMemory = { ...memory };
  for (const key of update.remove ?? []) delete next[key];
  for (const [key, value] of Object.entries(update.set ?? {})) next[key] = value;
  return workingMemorySize(next) <= maxBytes ? next : null;
}
