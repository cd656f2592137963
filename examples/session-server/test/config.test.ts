import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.ts';

const problemsOf = (env: Record<string, string>) => {
  try {
    readConfig(env);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('session server configuration', () => {
  it('defaults the allow-list to the studio under each loopback name of its port, and takes an explicit one as given', () => {
    expect(readConfig({}).ALLOWED_ORIGINS).toEqual([
      'http://localhost:3000',
      'http://127.0.0.1:3000',
      'http://[::1]:3000',
    ]);
    expect(readConfig({ ALLOWED_ORIGINS: 'https://studio.example.com' }).ALLOWED_ORIGINS).toEqual([
      'https://studio.example.com',
    ]);
    expect(readConfig({ ALLOWED_ORIGINS: '' }).ALLOWED_ORIGINS).toHaveLength(3);
  });

  it.each([
    'http://localhost:3000',
    'http://localhost:3000/',
    'https://studio.example.com',
    'http://[::1]:3000',
    'https://Studio.Example.com:8443',
  ])('accepts the origin %s', (origin) => expect(problemsOf({ ALLOWED_ORIGINS: origin })).toBe(''));

  it.each([
    'localhost:3000',
    'studio.example.com',
    'https://studio.example.com/app',
    'https://studio.example.com?x=1',
    'http://user@studio.example.com',
    'ftp://files.example.com',
    '*',
  ])('refuses %s as an origin', (origin) =>
    expect(problemsOf({ ALLOWED_ORIGINS: origin })).toContain('ALLOWED_ORIGINS (entry 1): not an origin'),
  );

  it.each(['127.0.0.1', '::1', '10.0.0.0/8', 'fd00::/8', '192.168.0.0/16', '0.0.0.0/0'])(
    'accepts the trusted proxy %s',
    (entry) => expect(problemsOf({ TRUSTED_PROXIES: entry })).toBe(''),
  );

  it.each(['proxy.internal', '127.1', '10.0.0.0/33', '10.0.0.0/', '::1/129', '10.0.0.0/8/8', '10.0.0.0/x'])(
    'refuses %s as a trusted proxy',
    (entry) =>
      expect(problemsOf({ TRUSTED_PROXIES: entry })).toContain(
        'TRUSTED_PROXIES (entry 1): not an IP address or CIDR range',
      ),
  );

  it('names every problem at once, never a value', () => {
    const message = problemsOf({
      PORT: '99999',
      COOKIE_SECURE: 'yes',
      DATABASE_URL: 'mysql://root:hunter2@db/app',
      SESSION_PEPPER: 'short-pepper',
    });
    expect(message.split('\n')[0]).toBe('Invalid configuration (4 problems); fix these variables and start again:');
    for (const variable of ['PORT', 'COOKIE_SECURE', 'DATABASE_URL', 'SESSION_PEPPER'])
      expect(message).toContain(`  ${variable}: `);
    // In English, though zod's mini flavour loads no locale of its own.
    expect(message).toContain('  PORT: Too big: expected number to be <=65535');
    expect(message).not.toContain('hunter2');
    expect(message).not.toContain('short-pepper');
  });
});
