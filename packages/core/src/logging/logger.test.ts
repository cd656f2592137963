import { afterEach, describe, expect, it, vi } from 'vitest';
import { consoleLogger } from './logger.js';

describe('consoleLogger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes warnings and errors to the console with the [deskpilot] prefix and the details', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const cause = new Error('boom');
    consoleLogger.warn('no context secret', { hint: 'set one' });
    consoleLogger.error('handler error', cause);
    expect(warn).toHaveBeenCalledExactlyOnceWith('[deskpilot] no context secret', { hint: 'set one' });
    expect(error).toHaveBeenCalledExactlyOnceWith('[deskpilot] handler error', cause);
  });

  it('passes no second argument when there are no details', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    consoleLogger.error('just a message');
    expect(error.mock.calls).toEqual([['[deskpilot] just a message']]);
  });
});
