import { describe, expect, it, vi } from 'vitest';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { ChatToolError, safeToolErrorMessage } from './chat-tool-error.js';

describe('ChatToolError.isInstance', () => {
  it('recognises an error made by another copy of the class, so its safe message is still shown', async () => {
    vi.resetModules();
    const { ChatToolError: OtherChatToolError } = await import('./chat-tool-error.js');
    const error = new OtherChatToolError('Order ORD-9 was not found.');
    expect(OtherChatToolError).not.toBe(ChatToolError);
    expect(error instanceof ChatToolError).toBe(false);
    expect(ChatToolError.isInstance(error)).toBe(true);
    expect(safeToolErrorMessage(error)).toBe('Order ORD-9 was not found.');
    expect(safeToolErrorMessage(new Error('backend failed', { cause: error }))).toBe('Order ORD-9 was not found.');
  });

  it('recognises no look-alike and no other Deskpilot error', () => {
    expect(ChatToolError.isInstance(new ChatToolError('Order ORD-9 was not found.'))).toBe(true);
    const lookAlike = Object.assign(new Error('SELECT * FROM orders failed'), { name: 'ChatToolError' });
    expect(ChatToolError.isInstance(lookAlike)).toBe(false);
    expect(safeToolErrorMessage(lookAlike)).toBe('The tool failed. Please try again later.');
    expect(ChatToolError.isInstance(new DeskpilotError('not_found'))).toBe(false);
    expect(DeskpilotError.isInstance(new ChatToolError('Order ORD-9 was not found.'))).toBe(false);
    for (const value of [null, undefined, 'ChatToolError', {}, { [Symbol.for('deskpilot.chat-tool-error')]: 'yes' }]) {
      expect(ChatToolError.isInstance(value)).toBe(false);
    }
  });
});
