import type { z } from 'zod';
import { DeskpilotError, type FieldError } from '../errors/deskpilot-error.js';

/** Result of a safe parse: the typed value, or the `invalid_request` error it would throw. */
export type SafeParseResult<T> = { success: true; data: T } | { success: false; error: DeskpilotError };

/** Validates `value` with a zod schema; a failure is an `invalid_request` error listing every field path. */
export function safeParseWithSchema<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  detail = 'The request body is invalid.',
): SafeParseResult<z.infer<Schema>> {
  const result = schema.safeParse(value);
  if (result.success) return { success: true, data: result.data };
  const errors: FieldError[] = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
  }));
  return { success: false, error: new DeskpilotError('invalid_request', { detail, errors }) };
}

/** Like {@link safeParseWithSchema}, but throws the `invalid_request` error. */
export function parseWithSchema<Schema extends z.ZodType>(schema: Schema, value: unknown, detail?: string): z.infer<Schema> {
  const result = safeParseWithSchema(schema, value, detail);
  if (!result.success) throw result.error;
  return result.data;
}
