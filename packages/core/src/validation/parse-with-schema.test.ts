import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import english from 'zod/v4/locales/en.js';
import german from 'zod/v4/locales/de.js';
import { isDeskpilotError } from '../errors/deskpilot-error.js';
import { loginBody } from '../session/session-routes.js';
import { safeParseWithSchema } from './parse-with-schema.js';

const fieldErrors = (schema: Parameters<typeof safeParseWithSchema>[0], value: unknown) => {
  const result = safeParseWithSchema(schema, value);
  if (result.success) return [];
  expect(isDeskpilotError(result.error, 'invalid_request')).toBe(true);
  return result.error.errors;
};

describe('safeParseWithSchema', () => {
  afterEach(() => void z.config(english()));

  it('names each field with an English message, for classic and mini schemas alike', () => {
    const tooLong = 'x'.repeat(321);
    expect(fieldErrors(loginBody, { email: tooLong, password: '', extra: 1 })).toEqual([
      { path: 'email', message: 'Too big: expected string to have <=320 characters' },
      { path: 'password', message: 'Too small: expected string to have >=1 characters' },
      { path: '(root)', message: 'Unrecognized key: "extra"' },
    ]);
    const classic = z.strictObject({ email: z.string().trim().min(1).max(320), password: z.string().min(1).max(1024) });
    expect(fieldErrors(classic, { email: tooLong, password: '', extra: 1 })).toEqual(
      fieldErrors(loginBody, { email: tooLong, password: '', extra: 1 }),
    );
  });

  it('keeps the messages English whatever locale the host configured for its own zod schemas', () => {
    z.config(german());
    // The host's own parse speaks German now…
    expect(zm.string().safeParse(1).error?.issues[0]?.message).not.toMatch(/^Invalid input/);
    // …the API's answers do not change.
    expect(fieldErrors(loginBody, { email: '', password: 'x' })).toEqual([
      { path: 'email', message: 'Too small: expected string to have >=1 characters' },
    ]);
  });
});
