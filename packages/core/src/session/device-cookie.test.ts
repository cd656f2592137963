import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { createDeviceCookie } from './device-cookie.js';

const pairOf = (setCookie: string) => setCookie.split(';')[0]!;

describe('createDeviceCookie', () => {
  const setup = (key: string | undefined = 'a device key of at least some length') => {
    const clock = createFakeClock();
    return { clock, device: createDeviceCookie({ prefix: 'deskpilot', secure: true, key, now: clock.now }) };
  };

  it('issues an HttpOnly cookie with nothing readable in it, recognised for its email only', () => {
    const { device } = setup();
    const setCookie = device.issue('alice@example.com');
    expect(setCookie).toMatch(/^deskpilot_device=[0-9a-z]+\.[\w-]{22}\.[\w-]{43}; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    expect(setCookie).not.toContain('alice');
    expect(device.recognizes(pairOf(setCookie), 'alice@example.com')).toBe(true);
    expect(device.recognizes(`other=1; ${pairOf(setCookie)}`, 'alice@example.com')).toBe(true);
    expect(device.recognizes(pairOf(setCookie), 'bob@example.com')).toBe(false);
  });

  it('recognises nothing tampered, duplicated, expired, or signed with another key', () => {
    const { device, clock } = setup();
    const pair = pairOf(device.issue('alice@example.com'));
    const [issuedAt, nonce, mac] = pair.slice('deskpilot_device='.length).split('.') as [string, string, string];
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    for (const header of [
      `deskpilot_device=${issuedAt}.${nonce}.${flipped}`,
      `deskpilot_device=${(Number.parseInt(issuedAt, 36) + 1).toString(36)}.${nonce}.${mac}`,
      `${pair}; ${pair}`,
      'deskpilot_device=garbage',
      '',
      null,
    ]) {
      expect(device.recognizes(header, 'alice@example.com')).toBe(false);
    }
    expect(setup('another key entirely, same length').device.recognizes(pair, 'alice@example.com')).toBe(false);
    // Random per process without a key: another process does not know it.
    const keyless = () => createDeviceCookie({ prefix: 'deskpilot', secure: true, now: clock.now });
    const own = keyless();
    expect(own.recognizes(pairOf(own.issue('alice@example.com')), 'alice@example.com')).toBe(true);
    expect(keyless().recognizes(pair, 'alice@example.com')).toBe(false);
    clock.advance(30 * 24 * 60 * 60 * 1000 + 1000);
    expect(device.recognizes(pair, 'alice@example.com')).toBe(false);
  });
});
