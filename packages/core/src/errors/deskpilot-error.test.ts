import { describe, expect, it, vi } from 'vitest';
import { problemResponse } from '../index.js';
import { DeskpilotError, isDeskpilotError } from './deskpilot-error.js';
import { toProblemDetails } from './problem-details.js';

/** The `DeskpilotError` class of a second copy of this module, as an app with two copies of core has. */
async function loadSecondCopy(): Promise<typeof DeskpilotError> {
  vi.resetModules();
  const secondCopy = await import('./deskpilot-error.js');
  return secondCopy.DeskpilotError;
}

describe('DeskpilotError.isInstance', () => {
  it('recognises an error made by another copy of the class, where instanceof does not', async () => {
    const OtherDeskpilotError = await loadSecondCopy();
    const error = new OtherDeskpilotError('forbidden', {
      detail: 'Not your conversation.',
      headers: { 'x-reason': 'owner' },
    });
    expect(OtherDeskpilotError).not.toBe(DeskpilotError);
    expect(error instanceof DeskpilotError).toBe(false);
    expect(DeskpilotError.isInstance(error)).toBe(true);
    expect(isDeskpilotError(error, 'forbidden')).toBe(true);
    expect(isDeskpilotError(error, 'conflict')).toBe(false);
  });

  it("keeps the code, detail and headers of another copy's error in the problem response", async () => {
    const OtherDeskpilotError = await loadSecondCopy();
    const error = new OtherDeskpilotError('rate_limited', { detail: 'Slow down.', headers: { 'retry-after': '7' } });
    expect(toProblemDetails(error)).toMatchObject({ status: 429, code: 'rate_limited', detail: 'Slow down.' });
    const response = problemResponse(error);
    expect(response.status).toBe(429);
    expect(response.headers).toContainEqual(['retry-after', '7']);
  });

  it('recognises its own errors and no look-alike', () => {
    expect(DeskpilotError.isInstance(new DeskpilotError('internal'))).toBe(true);
    const lookAlike = Object.assign(new Error('Forbidden'), {
      name: 'DeskpilotError',
      code: 'forbidden',
      status: 403,
      detail: 'Forbidden',
    });
    expect(DeskpilotError.isInstance(lookAlike)).toBe(false);
    expect(isDeskpilotError(lookAlike, 'forbidden')).toBe(false);
    expect(toProblemDetails(lookAlike)).toMatchObject({ status: 500, code: 'internal' });
    for (const value of [null, undefined, 'DeskpilotError', 403, {}, { [Symbol.for('deskpilot.error')]: 'yes' }]) {
      expect(DeskpilotError.isInstance(value)).toBe(false);
    }
  });

  it('adds no own property, so deep equality and copies of the fields ignore the brand', () => {
    const error = new DeskpilotError('conflict', { detail: 'Already answered.' });
    expect(Object.getOwnPropertySymbols(error)).toEqual([]);
    expect(DeskpilotError.isInstance({ ...error })).toBe(false);
  });
});
