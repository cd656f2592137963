import { z } from 'zod';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { JsonValue } from '../../validation/check-json-value.js';
import { jsonValueSchema, validText } from '../../validation/input-schemas.js';
import { safeParseWithSchema, type SafeParseResult } from '../../validation/parse-with-schema.js';
import {
  builtinCapabilities,
  capabilityNamePattern,
  resolveCapabilities,
  type CapabilityRegistry,
} from '../../capabilities/capabilities.js';
import type { BusinessType } from '../tools/chat-tool.js';

/** The request context after defaults and least privilege. */
export interface ChatContext {
  /** Trimmed, lower case. */
  userEmail: string;
  userRole: string;
  projectKey: string;
  businessType: BusinessType;
  /** What the page shows: any JSON value within the limits, null when absent. */
  pageContext: JsonValue;
  /** A hint from the page: any JSON value within the limits, null when absent. */
  proactiveHint: JsonValue;
  /** The client's own note: any JSON value within the limits, null when absent. */
  workingMemoryBlock: JsonValue;
  /** Every registered capability, resolved to true or false. */
  capabilities: Record<string, boolean>;
}

/** Safe defaults for a context that says nothing. */
export const defaultChatContext = {
  userEmail: 'anonymous@deskpilot.invalid',
  userRole: 'viewer',
  projectKey: 'unassigned',
  businessType: 'b2c',
} as const;

/** Limits on the context fields of unspecified shape (`pageContext`, `proactiveHint`, `workingMemoryBlock`). */
export interface ChatContextLimits {
  /** Deepest nesting of arrays and objects in each of the three fields. @default 32 */
  contextValueDepth?: number;
  /** Size of `pageContext`, in UTF-8 bytes of its JSON. @default 16384 */
  pageContextBytes?: number;
  /** Size of `proactiveHint`, in UTF-8 bytes of its JSON. @default 4096 */
  proactiveHintBytes?: number;
  /** Size of `workingMemoryBlock`, in UTF-8 bytes of its JSON. @default 16384 */
  workingMemoryBlockBytes?: number;
}

/** The defaults of {@link ChatContextLimits}. */
export const defaultChatContextLimits: Readonly<Required<ChatContextLimits>> = Object.freeze({
  contextValueDepth: 32,
  pageContextBytes: 16_384,
  proactiveHintBytes: 4096,
  workingMemoryBlockBytes: 16_384,
});

/** A field of unspecified shape: any JSON value within the limits; absent is null. */
const anyJson = (maxDepth: number, maxBytes: number) =>
  jsonValueSchema({ maxDepth, maxBytes })
    .optional()
    .transform((value): JsonValue => value ?? null);

/**
 * The zod schema of a chat context's fields (capability flags are read apart). Every string goes
 * through {@link validText}: claims of a signed grant, parsed here again, meet the same rule as a body.
 */
export function createChatContextSchema(limits: ChatContextLimits = {}) {
  const { contextValueDepth, pageContextBytes, proactiveHintBytes, workingMemoryBlockBytes } = {
    ...defaultChatContextLimits,
    ...limits,
  };
  return z.object({
    userEmail: validText()
      .trim()
      .toLowerCase()
      .max(320)
      .regex(/^[^\s@]+@[^\s@]+$/, 'Expected an email address')
      .nullish()
      .transform((value) => value ?? defaultChatContext.userEmail),
    userRole: validText()
      .max(64)
      .trim()
      .min(1)
      .nullish()
      .transform((value) => value ?? defaultChatContext.userRole),
    projectKey: validText()
      .trim()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'Expected a project key')
      .nullish()
      .transform((value) => value ?? defaultChatContext.projectKey),
    businessType: z
      .enum(['b2c', 'b2b'])
      .nullish()
      .transform((value) => value ?? defaultChatContext.businessType),
    pageContext: anyJson(contextValueDepth, pageContextBytes),
    proactiveHint: anyJson(contextValueDepth, proactiveHintBytes),
    workingMemoryBlock: anyJson(contextValueDepth, workingMemoryBlockBytes),
  });
}

/** The chat context schema with the default limits. */
export const chatContextSchema = createChatContextSchema();

// Schemas by limits: a handler parses every request with the same limits, so this holds one or two.
// A cache only: every way of computing it gives the same schema, so its mutants change nothing a
// caller sees (CPU and memory only).
const schemas = new Map<string, typeof chatContextSchema>();
// Stryker disable all
function schemaFor(limits: ChatContextLimits | undefined): typeof chatContextSchema {
  if (limits === undefined) return chatContextSchema;
  const resolved = { ...defaultChatContextLimits, ...limits };
  const key = `${resolved.contextValueDepth}/${resolved.pageContextBytes}/${resolved.proactiveHintBytes}/${resolved.workingMemoryBlockBytes}`;
  let schema = schemas.get(key);
  if (!schema) {
    if (schemas.size >= 16) schemas.clear();
    schema = createChatContextSchema(resolved);
    schemas.set(key, schema);
  }
  return schema;
}
// Stryker restore all

/** Options of {@link parseChatContext}. */
export interface ParseChatContextOptions {
  /** @default builtinCapabilities */
  capabilities?: CapabilityRegistry;
  /** @default defaultChatContextLimits */
  limits?: ChatContextLimits;
}

/**
 * Parses the `context` of a chat request: safe defaults for missing fields, `userEmail` trimmed and
 * lower-cased, and capability flags resolved with least privilege (read → true, write → false unless
 * granted, unknown flags ignored). A flag-shaped key (`canSomething`) whose value is not a boolean is
 * an `invalid_request`, like any other bad field.
 */
export function safeParseChatContext(
  input: unknown,
  options: ParseChatContextOptions = {},
): SafeParseResult<ChatContext> {
  const registry = options.capabilities ?? builtinCapabilities;
  const value = input ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    return {
      success: false,
      error: new DeskpilotError('invalid_request', {
        detail: 'context must be an object.',
        errors: [{ path: 'context', message: 'Expected an object' }],
      }),
    };
  }
  const flags: Record<string, boolean> = {};
  const errors: Array<{ path: string; message: string }> = [];
  for (const [key, flag] of Object.entries(value)) {
    if (!capabilityNamePattern.test(key)) continue;
    if (typeof flag === 'boolean') flags[key] = flag;
    else errors.push({ path: `context.${key}`, message: 'Capability flags must be booleans' });
  }
  // Stryker disable next-line StringLiteral: the detail is replaced by the one below.
  const parsed = safeParseWithSchema(schemaFor(options.limits), value, 'The chat context is invalid.');
  if (!parsed.success)
    // Stryker disable next-line ArrayDeclaration: a failed parse always names its errors.
    errors.push(...(parsed.error.errors ?? []).map((error) => ({ ...error, path: `context.${error.path}` })));
  if (errors.length > 0 || !parsed.success) {
    return {
      success: false,
      error: new DeskpilotError('invalid_request', { detail: 'The chat context is invalid.', errors }),
    };
  }
  return { success: true, data: { ...parsed.data, capabilities: resolveCapabilities(flags, registry) } };
}

/**
 * Like {@link safeParseChatContext}, but throws the `invalid_request` error.
 *
 * @example
 * // Identity and flags from the host's session; of the request body, only what the page shows.
 * const context = parseChatContext({ userEmail: session.user.email, projectKey: session.projectKey, canRefundOrders: isAdmin, pageContext });
 * context.capabilities; // { canViewOrders: true, …, canRefundOrders: isAdmin, canCancelOrders: false, … }
 */
export function parseChatContext(input: unknown, options?: ParseChatContextOptions): ChatContext {
  const result = safeParseChatContext(input, options);
  if (!result.success) throw result.error;
  return result.data;
}
