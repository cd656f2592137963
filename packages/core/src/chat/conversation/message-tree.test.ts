import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { branchTo, branchView, messageOf, newestLeafFrom, type MessageTree } from './message-tree.js';

const message = (id: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text: id }] });
const tree = (entries: Array<[string, string | null]>, activeId: string | null): MessageTree => ({
  messages: entries.map(([id, parentId]) => ({ message: message(id), parentId })),
  activeId,
});

// q1 ─ a1 ─ q2 ─ a2
//         └─ q2' ─ a2' ─ q3
//   └ a1'
const conversation = tree(
  [
    ['q1', null],
    ['a1', 'q1'],
    ['q2', 'a1'],
    ['a2', 'q2'],
    ['q2e', 'a1'],
    ['a2e', 'q2e'],
    ['a1r', 'q1'],
    ['q3', 'a2e'],
  ],
  'a2',
);

describe('message trees', () => {
  it('follows parents from the active end, and lists the siblings along it, oldest first', () => {
    expect(branchView(conversation)).toEqual({
      messages: ['q1', 'a1', 'q2', 'a2'].map(message),
      siblings: { a1: ['a1', 'a1r'], q2: ['q2', 'q2e'] },
    });
    expect(branchTo(conversation, 'q3').map((entry) => entry.id)).toEqual(['q1', 'a1', 'q2e', 'a2e', 'q3']);
    expect(branchTo(conversation, null)).toEqual([]);
    expect(branchTo(conversation, 'unknown')).toEqual([]);
  });

  it('picks the newest path below a chosen sibling', () => {
    expect(newestLeafFrom(conversation, 'q2e')).toBe('q3');
    expect(newestLeafFrom(conversation, 'q2')).toBe('a2');
    expect(newestLeafFrom(conversation, 'q1')).toBe('a1r');
    expect(newestLeafFrom(conversation, 'a2')).toBe('a2');
    expect(newestLeafFrom(conversation, 'unknown')).toBeNull();
    expect(messageOf(conversation, 'q2e')?.parentId).toBe('a1');
    expect(messageOf(conversation, 'q1')?.parentId).toBeNull();
    expect(messageOf(conversation, 'unknown')).toBeUndefined();
  });

  it('lists the siblings of a message whatever its id ("__proto__" included)', () => {
    const odd = tree(
      [
        ['__proto__', null],
        ['constructor', null],
      ],
      '__proto__',
    );
    expect(JSON.parse(JSON.stringify(branchView(odd).siblings))).toEqual({
      ['__proto__']: ['__proto__', 'constructor'],
    });
  });

  it('ends a walk a corrupted store would make endless', () => {
    const loop = tree(
      [
        ['x', 'y'],
        ['y', 'x'],
      ],
      'y',
    );
    expect(branchTo(loop, 'y').map((entry) => entry.id)).toEqual(['x', 'y']);
    expect(['x', 'y']).toContain(newestLeafFrom(loop, 'x'));
  });
});
