import { safeParse, type $ZodType, type output } from 'zod/v4/core';
import english from 'zod/v4/locales/en.js';
import { DeskpilotError, type FieldError } from '../errors/deskpilot-error.js';

/** Result of a safe parse: the typed value, or the `invalid_request` error it would throw. */
export type SafeParseResult<T> = { success: true; data: T } | { success: false; error: DeskpilotError };

const plainKey = /^[\w$-]{1,64}$/;

/**
 * The dotted path of a field, as problem details name it (`messages.0.id`, `(root)` for the body
 * itself). A key that is not plain is shown JSON-escaped and cut to 64 characters, so the answer never
 * echoes invalid text or a huge key back.
 */
export function formatFieldPath(path: ReadonlyArray<PropertyKey>): string {
  const segments = path.map((segment) => {
    if (typeof segment === 'number') return String(segment);
    const key = String(segment);
    if (plainKey.test(key)) return key;
    const shown = JSON.stringify(key.length > 64 ? key.slice(0, 64) : key).slice(1, -1);
    return key.length > 64 ? `${shown}…` : shown;
  });
  return segments.join('.') || '(root)';
}

// The field messages are English whatever locale the host configured for its own zod schemas: they
// are part of the API's answers. Set per parse, so they need neither classic zod (which configures
// English when imported) nor a change to the host's global zod configuration.
const { localeError } = english();

/**
 * Validates `value` with a zod 4 schema (classic or mini); a failure is an `invalid_request` error
 * listing every field path.
 */
export function safeParseWithSchema<Schema extends $ZodType>(
  schema: Schema,
  value: unknown,
  detail = 'The request body is invalid.',
): SafeParseResult<output<Schema>> {
  const result = safeParse(schema, value, { error: localeError });
  if (result.success) return { success: true, data: result.data };
  const errors: FieldError[] = result.error.issues.map((issue) => ({
    path: formatFieldPath(issue.path),
    message: issue.message,
  }));
  return { success: false, error: new DeskpilotError('invalid_request', { detail, errors }) };
}

/** Like {@link safeParseWithSchema}, but throws the `invalid_request` error. */
export function parseWithSchema<Schema extends $ZodType>(
  schema: Schema,
  value: unknown,
  detail?: string,
): output<Schema> {
  const result = safeParseWithSchema(schema, value, detail);
  if (!result.success) throw result.error;
  return result.data;
}
