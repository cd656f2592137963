import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { CapabilityRegistry } from '../context/capabilities.js';
import { verifyChatGrant, type ChatGrantPolicy } from '../context/chat-grant.js';
import { safeParseChatContext, type ChatContext, type ChatContextLimits } from '../context/parse-chat-context.js';

/** Options of {@link resolveChatContext}. */
export interface ResolveChatContextOptions {
  /** The request body's `context`. */
  input: unknown;
  capabilities: CapabilityRegistry;
  limits?: ChatContextLimits | undefined;
  /** When set, identity and flags come only from `context.grant`, a JWS signed with this secret. */
  contextSecret?: string | undefined;
  grantPolicy: Required<ChatGrantPolicy>;
  now: () => number;
}

/** The context a turn runs in, or why the request is refused. */
export type ResolveChatContextResult = { ok: true; context: ChatContext } | { ok: false; error: DeskpilotError };

/**
 * Identity and flags: from the signed grant when a secret is configured, from the body otherwise.
 * A missing or invalid grant throws `unauthenticated`, as {@link verifyChatGrant} does.
 */
export async function resolveChatContext(options: ResolveChatContextOptions): Promise<ResolveChatContextResult> {
  const parseOptions = { capabilities: options.capabilities, limits: options.limits };
  const parsed = safeParseChatContext(options.input, parseOptions);
  if (!parsed.success) return { ok: false, error: parsed.error };
  if (!options.contextSecret) return { ok: true, context: parsed.data };
  const grant = await verifyChatGrant((options.input as { grant?: unknown } | undefined)?.grant, options.contextSecret, { ...options.grantPolicy, now: options.now });
  const { pageContext, proactiveHint, workingMemoryBlock } = parsed.data;
  const granted = safeParseChatContext({ ...grant, ...grant.capabilities, pageContext, proactiveHint, workingMemoryBlock }, parseOptions);
  if (!granted.success) return { ok: false, error: new DeskpilotError('unauthenticated', { detail: 'The chat grant is invalid.' }) };
  return { ok: true, context: granted.data };
}
