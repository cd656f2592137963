// The input policy as classic zod schemas, for the chat's request schemas and a host's own. Not in
// `@deskpilot/core/session`: a session-only process never loads classic zod.
import { z } from 'zod';
import { checkJsonValue, type JsonValue } from './check-json-value.js';
import { textProblem } from './valid-text.js';

/**
 * A zod string schema that refuses invalid text with the same messages as the edge policy, for
 * strings that reach storage without passing through a request body (a signed grant's claims, a
 * value built by code). Chain further checks on it: `validText().trim().max(320)`.
 */
export function validText() {
  return z.string().superRefine((text, context) => {
    const problem = textProblem(text);
    if (problem !== null) context.addIssue({ code: 'custom', message: problem, input: text });
  });
}

/** Options of {@link jsonValueSchema}. */
export interface JsonValueSchemaOptions {
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Largest size of the value's JSON, in UTF-8 bytes. */
  maxBytes: number;
}

/**
 * A zod schema for a field of unspecified shape: any JSON value within a depth and size limit, strings
 * and keys valid text. The value passes through as it is (never copied or rewritten).
 */
export function jsonValueSchema(options: JsonValueSchemaOptions): z.ZodType<JsonValue> {
  return z.unknown().superRefine((value, context) => {
    for (const problem of checkJsonValue(value, options)) {
      context.addIssue({ code: 'custom', message: problem.message, path: problem.path, input: value });
    }
  }) as unknown as z.ZodType<JsonValue>;
}
