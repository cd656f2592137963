import { z } from 'zod';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { safeParseWithSchema, type SafeParseResult } from '../validation/parse-with-schema.js';
import { builtinCapabilities, capabilityNamePattern, resolveCapabilities, type CapabilityRegistry } from './capabilities.js';
import type { BusinessType } from './tools/chat-tool.js';

/** The request context after defaults and least privilege. */
export interface ChatContext {
  /** Trimmed, lower case. */
  userEmail: string;
  userRole: string;
  projectKey: string;
  businessType: BusinessType;
  pageContext: Record<string, unknown> | null;
  proactiveHint: string | null;
  workingMemoryBlock: string | null;
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

const text = (max: number) => z.string().max(max);
export const chatContextSchema = z.object({
  userEmail: z
    .string()
    .trim()
    .toLowerCase()
    .max(320)
    .regex(/^[^\s@]+@[^\s@]+$/, 'Expected an email address')
    .nullish()
    .transform((value) => value ?? defaultChatContext.userEmail),
  userRole: text(64).trim().min(1).nullish().transform((value) => value ?? defaultChatContext.userRole),
  projectKey: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'Expected a project key')
    .nullish()
    .transform((value) => value ?? defaultChatContext.projectKey),
  businessType: z.enum(['b2c', 'b2b']).nullish().transform((value) => value ?? defaultChatContext.businessType),
  pageContext: z.record(z.string(), z.unknown()).nullish().transform((value) => value ?? null),
  proactiveHint: text(4000).nullish().transform((value) => value ?? null),
  workingMemoryBlock: text(16_384).nullish().transform((value) => value ?? null),
});

/** Options of {@link parseChatContext}. */
export interface ParseChatContextOptions {
  /** @default builtinCapabilities */
  capabilities?: CapabilityRegistry;
}

/**
 * Parses the `context` of a chat request: safe defaults for missing fields, `userEmail` trimmed and
 * lower-cased, and capability flags resolved with least privilege (read → true, write → false unless
 * granted, unknown flags ignored). A flag-shaped key (`canSomething`) whose value is not a boolean is
 * an `invalid_request`, like any other bad field.
 */
export function safeParseChatContext(input: unknown, options: ParseChatContextOptions = {}): SafeParseResult<ChatContext> {
  const registry = options.capabilities ?? builtinCapabilities;
  const value = input ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { success: false, error: new DeskpilotError('invalid_request', { detail: 'context must be an object.', errors: [{ path: 'context', message: 'Expected an object' }] }) };
  }
  const flags: Record<string, boolean> = {};
  const errors: Array<{ path: string; message: string }> = [];
  for (const [key, flag] of Object.entries(value)) {
    if (!capabilityNamePattern.test(key)) continue;
    if (typeof flag === 'boolean') flags[key] = flag;
    else errors.push({ path: `context.${key}`, message: 'Capability flags must be booleans' });
  }
  const parsed = safeParseWithSchema(chatContextSchema, value, 'The chat context is invalid.');
  if (!parsed.success) errors.push(...(parsed.error.errors ?? []).map((error) => ({ ...error, path: `context.${error.path}` })));
  if (errors.length > 0 || !parsed.success) {
    return { success: false, error: new DeskpilotError('invalid_request', { detail: 'The chat context is invalid.', errors }) };
  }
  return { success: true, data: { ...parsed.data, capabilities: resolveCapabilities(flags, registry) } };
}

/** Like {@link safeParseChatContext}, but throws the `invalid_request` error. */
export function parseChatContext(input: unknown, options?: ParseChatContextOptions): ChatContext {
  const result = safeParseChatContext(input, options);
  if (!result.success) throw result.error;
  return result.data;
}
