import { describe, expect, it } from 'vitest';
import { DeskpilotError } from './deskpilot-error.js';
import { describeError } from './describe-error.js';

describe('describeError', () => {
  it('gives the message and every cause, one per line', () => {
    const error = new Error('Cannot open the embedded database in /data/chat.', {
      cause: Object.assign(new Error('read-only file system'), { code: 'EROFS' }),
    });
    expect(describeError(error)).toBe(
      'Cannot open the embedded database in /data/chat.\n  caused by: read-only file system [EROFS]',
    );
  });

  it('never prints [object Object] for what emscripten and others throw', () => {
    expect(describeError({ name: 'ErrnoError', errno: 51 })).toBe('ErrnoError (errno 51)');
    expect(describeError({ message: 'boom' })).toBe('Object: boom');
    expect(describeError({ some: 'thing' })).toBe('Object {"some":"thing"}');
    expect(describeError(new Error('wrapped', { cause: { name: 'ErrnoError', errno: 69 } }))).toBe(
      'wrapped\n  caused by: ErrnoError (errno 69)',
    );
    expect(describeError('a string')).toBe('a string');
    expect(describeError(undefined)).toBe('undefined');
    for (const thrown of [{}, Object.create(null), { name: 'X' }])
      expect(describeError(thrown)).not.toContain('[object Object]');
  });

  it('names error classes and Node error codes, and stops at a cycle', () => {
    expect(describeError(new DeskpilotError('store_unavailable', { detail: 'The database is unavailable.' }))).toBe(
      'DeskpilotError: The database is unavailable. [store_unavailable]',
    );
    expect(
      describeError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })),
    ).toBe('connect ECONNREFUSED 127.0.0.1:6379');
    const cyclic = new Error('outer');
    (cyclic as { cause?: unknown }).cause = cyclic;
    expect(describeError(cyclic)).toBe('outer');
  });
});
