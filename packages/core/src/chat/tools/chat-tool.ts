import type { z } from 'zod';
import type { CommerceBackend } from '../backends/commerce-backend.js';
import type { TicketBackend } from '../backends/ticket-backend.js';

/** Business model of a project: some tools exist only for one of them. */
export type BusinessType = 'b2c' | 'b2b';

/** What a tool knows about the request it runs for. Identity comes from here, never from model arguments. */
export interface ChatToolContext {
  userEmail: string;
  projectKey: string;
  businessType: BusinessType;
  commerce: CommerceBackend;
  /** The ticket system, when the host connected one (tools that need it are offered only then). */
  tickets?: TicketBackend | undefined;
  /** For approved write tools: the approval id, passed downstream as the idempotency key. */
  idempotencyKey?: string | undefined;
  abortSignal?: AbortSignal | undefined;
}

/** The families of tools: the built-in ones, or a host's own (`'crm'`, `'billing'`…). Render-only `ui` tools have no side effect. */
export type ChatToolKind = 'commerce' | 'ticket' | 'ui' | 'memory' | (string & {});

/** The backends a handler was given: what decides whether a tool can be offered at all. */
export interface ChatBackends {
  commerce: CommerceBackend;
  tickets?: TicketBackend | undefined;
}

/** A tool the assistant may be offered. */
export interface ChatToolDefinition<Input = unknown, Output = unknown> {
  name: string;
  kind: ChatToolKind;
  /** The capability flag the tool needs (e.g. `canRefundOrders`); null when none. Write capabilities go through the approval gate. */
  capability: string | null;
  /** Business types the tool exists for. @default both */
  businessTypes?: readonly BusinessType[];
  /**
   * Whether the backends can serve this tool (an optional backend or method is there); a tool they
   * cannot serve is never offered. Checked once, when the handler is created. @default always
   */
  availableWith?: (backends: ChatBackends) => boolean;
  /** Shown to the model. */
  description: string;
  inputSchema: z.ZodType<Input>;
  execute(input: Input, context: ChatToolContext): Promise<Output>;
}

/** Declares a tool with its input type inferred from the schema. */
export function defineChatTool<Schema extends z.ZodType, Output>(
  definition: Omit<ChatToolDefinition<z.infer<Schema>, Output>, 'inputSchema'> & { inputSchema: Schema },
): ChatToolDefinition<z.infer<Schema>, Output> {
  // TypeScript cannot see that a generic `Schema` is a `ZodType` of its own output; it is by definition.
  return definition as ChatToolDefinition<z.infer<Schema>, Output>;
}
