import { describe, expect, it } from 'vitest';
import { isSessionRoute } from './is-session-route.js';

describe('isSessionRoute', () => {
  it.each([
    ['/sessions', true],
    ['/sessions/', true],
    ['/sessions/current', true],
    ['/sessions/current/project', true],
    ['/sessionsx', false],
    ['/sessions-old/current', false],
    ['/api/sessions', false],
    ['/', false],
    ['', false],
  ])('%j → %s', (path, expected) => {
    expect(isSessionRoute(path)).toBe(expected);
  });
});
