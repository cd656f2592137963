import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { createDeviceCookie, type DeviceCookie } from './device-cookie.js';

const pairOf = (setCookie: string) => setCookie.split(';')[0]!;
const knows = (device: DeviceCookie, header: string | null, email = 'alice@example.com') =>
  device.recognize(header, email) !== undefined;

describe('createDeviceCookie', () => {
  const setup = (key = 'a device key of at least some length') => {
    const clock = createFakeClock();
    return { clock, device: createDeviceCookie({ prefix: 'deskpilot', secure: true, key, now: clock.now }) };
  };

  it('issues an HttpOnly cookie with nothing readable in it, recognised for its email only', () => {
    const { device } = setup();
    const setCookie = device.issue('alice@example.com');
    expect(setCookie).toMatch(
      /^deskpilot_device=[0-9a-z]+\.[\w-]{22}\.[\w-]{43}; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(setCookie).not.toContain('alice');
    expect(knows(device, pairOf(setCookie))).toBe(true);
    expect(knows(device, `other=1; ${pairOf(setCookie)}`)).toBe(true);
    expect(knows(device, pairOf(setCookie), 'bob@example.com')).toBe(false);
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
      expect(knows(device, header)).toBe(false);
    }
    expect(knows(setup('another key entirely, same length').device, pair)).toBe(false);
    // Random per process without a key: another process does not know it.
    const keyless = () => createDeviceCookie({ prefix: 'deskpilot', secure: true, now: clock.now });
    const own = keyless();
    expect(knows(own, pairOf(own.issue('alice@example.com')))).toBe(true);
    expect(knows(keyless(), pair)).toBe(false);
    clock.advance(30 * 24 * 60 * 60 * 1000 + 1000);
    expect(knows(device, pair)).toBe(false);
  });

  it('stops trusting a cookie after 3 failed sign-ins with it', () => {
    const { device } = setup();
    const pair = pairOf(device.issue('alice@example.com'));
    const other = pairOf(device.issue('alice@example.com'));
    for (let failure = 0; failure < 3; failure++) {
      expect(knows(device, pair)).toBe(true);
      device.noteFailure(device.recognize(pair, 'alice@example.com')!);
    }
    expect(knows(device, pair)).toBe(false);
    // Another browser of the same account keeps its own count.
    expect(knows(device, other)).toBe(true);
  });
});
