import { describe, expect, it } from 'vitest';
import { applyWorkingMemoryChange, workingMemorySize, workingMemoryUpdateSchema } from './working-memory.js';

describe('applyWorkingMemoryChange', () => {
  it('sets and removes keys, keeping the others', () => {
    expect(applyWorkingMemoryChange({ a: '1', b: '2' }, { set: { c: '3' }, remove: ['a'], maxBytes: 8192 })).toEqual({
      b: '2',
      c: '3',
    });
  });

  it('never wipes memory with an empty change', () => {
    expect(applyWorkingMemoryChange({ a: '1' }, { maxBytes: 8192 })).toEqual({ a: '1' });
    expect(applyWorkingMemoryChange({ a: '1' }, { set: {}, remove: [], maxBytes: 8192 })).toEqual({ a: '1' });
  });

  it('refuses a change that would pass the size cap, and counts UTF-8 bytes of the JSON', () => {
    expect(applyWorkingMemoryChange({}, { set: { big: 'x'.repeat(900) }, maxBytes: 512 })).toBeNull();
    const notes = { cafe: 'crème brûlée "to go"' };
    expect(workingMemorySize(notes)).toBe(Buffer.byteLength(JSON.stringify(notes)));
    expect(applyWorkingMemoryChange({}, { set: notes, maxBytes: workingMemorySize(notes) })).toEqual(notes);
    expect(applyWorkingMemoryChange({}, { set: notes, maxBytes: workingMemorySize(notes) - 1 })).toBeNull();
  });

  it('validates keys and values', () => {
    expect(workingMemoryUpdateSchema.safeParse({ set: { 'Bad Key': 'x' } }).success).toBe(false);
    expect(workingMemoryUpdateSchema.safeParse({ set: { ok: '' } }).success).toBe(false);
    expect(workingMemoryUpdateSchema.safeParse({ wipe: true }).success).toBe(false);
    expect(workingMemoryUpdateSchema.safeParse({ set: { customer_name: 'Jane' } }).success).toBe(true);
  });
});
