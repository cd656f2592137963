import { describe, expect, it } from 'vitest';
import { applyWorkingMemoryUpdate, workingMemoryUpdateSchema } from './working-memory.js';

describe('applyWorkingMemoryUpdate', () => {
  it('sets and removes keys, keeping the others', () => {
    expect(applyWorkingMemoryUpdate({ a: '1', b: '2' }, { set: { c: '3' }, remove: ['a'] }, 8192)).toEqual({ b: '2', c: '3' });
  });

  it('never wipes memory with an empty update', () => {
    expect(applyWorkingMemoryUpdate({ a: '1' }, {}, 8192)).toEqual({ a: '1' });
    expect(applyWorkingMemoryUpdate({ a: '1' }, { set: {}, remove: [] }, 8192)).toEqual({ a: '1' });
  });

  it('refuses an update that would pass the size cap', () => {
    expect(applyWorkingMemoryUpdate({}, { set: { big: 'x'.repeat(900) } }, 512)).toBeNull();
  });

  it('validates keys and values', () => {
    expect(workingMemoryUpdateSchema.safeParse({ set: { 'Bad Key': 'x' } }).success).toBe(false);
    expect(workingMemoryUpdateSchema.safeParse({ set: { ok: '' } }).success).toBe(false);
    expect(workingMemoryUpdateSchema.safeParse({ wipe: true }).success).toBe(false);
    expect(workingMemoryUpdateSchema.safeParse({ set: { customer_name: 'Jane' } }).success).toBe(true);
  });
});
