import { z } from 'zod';
import { utf8ByteLength } from '../../validation/utf8-byte-length.js';
import type { WorkingMemory, WorkingMemoryChange } from './chat-store.js';

/** Input of the `updateWorkingMemory` tool: keys to set and keys to remove. */
export const workingMemoryUpdateSchema = z
  .strictObject({
    set: z
      .record(
        z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'Keys are short slugs like customer_name'),
        z.string().trim().min(1).max(1000),
      )
      .optional(),
    remove: z.array(z.string().max(40)).max(50).optional(),
  })
  .describe('Keys to set and keys to remove.');

export type WorkingMemoryUpdate = z.infer<typeof workingMemoryUpdateSchema>;

/** Byte size of working memory as stored: the UTF-8 bytes of its JSON. */
export function workingMemorySize(memory: WorkingMemory): number {
  return utf8ByteLength(JSON.stringify(memory));
}

/**
 * Applies a change to working memory: removals first, then the keys set. Untouched keys are kept, so
 * two turns that each set a note both keep theirs, and an empty change changes nothing. Returns null
 * when the result would exceed `change.maxBytes`. Stores call it (or do the same in their own
 * language) inside their atomic update.
 */
export function applyWorkingMemoryChange(memory: WorkingMemory, change: WorkingMemoryChange): WorkingMemory | null {
  const next: WorkingMemory = { ...memory };
  for (const key of change.remove ?? []) delete next[key];
  for (const [key, value] of Object.entries(change.set ?? {})) next[key] = value;
  return workingMemorySize(next) <= change.maxBytes ? next : null;
}
