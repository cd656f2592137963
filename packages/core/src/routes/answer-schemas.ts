import * as z from 'zod/mini';

/** A time as the routes answer it: an ISO 8601 string, documented as such (a description, not a check). */
export function isoTime(description?: string) {
  return z.string().check(z.meta({ format: 'date-time', description }));
}

/** `schema` with a description in the OpenAPI document. */
export function described<Schema extends z.ZodMiniType>(schema: Schema, description: string): Schema {
  return schema.check(z.meta({ description })) as Schema;
}
