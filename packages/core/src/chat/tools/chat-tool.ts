import type { Schema } from 'ai';
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
  /**
   * The capability flags of the request (resolved: every registered one true or false), for a tool
   * that shows more only to those who may see it (a pre-check's card shows the customer only with
   * `canViewCustomers`). Absent: none (least privilege).
   */
  capabilities?: Readonly<Record<string, boolean>> | undefined;
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

/** What an approval card shows a person before they decide: one line, then labelled values. */
export interface ApprovalCard {
  /** E.g. "Refund €129.00 of order ORD-1001 to Jane Doe". */
  summary: string;
  /** E.g. `{ label: 'Amount', value: '€129.00 (everything that remains)' }`, in the order shown. */
  fields: Array<{ label: string; value: string }>;
  /**
   * The money the call moves, machine-readable (minor units, ISO 4217 currency): what a step-up
   * policy's `amountAbove` reads. Absent when the card cannot tell (the user may not read the order).
   */
  amount?: { minor: number; currency: string };
}

/** A write call's pre-check: the card to propose, or why the call cannot succeed (no card, the model is told). */
export type PreparedApproval = { ok: true; card: ApprovalCard } | { ok: false; message: string };

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
  /** A Zod schema, or a JSON Schema wrapped with the AI SDK's `jsonSchema()` (a tool that comes from another system). */
  inputSchema: z.ZodType<Input> | Schema<Input>;
  /**
   * `true`: every call waits for the user's approval, whatever its capability (a tool an MCP server
   * marks destructive). It can only add the gate: a write capability's tool always asks, and `false`
   * for one is refused when the handler starts. @default whether its capability is a write capability
   */
  requiresApproval?: boolean;
  execute(input: Input, context: ChatToolContext): Promise<Output>;
  /**
   * For a write tool: reads what the call would change (no side effect) before it is proposed for
   * approval. `{ ok: true, card }` proposes it with the card (`approval.descriptor` of the tool part,
   * the summary as its `requestReason`); `{ ok: false, message }` proposes nothing, and the model gets
   * `message` as the call's error (an order already refunded is answered as such). A pre-check that
   * throws proposes nothing either (fail closed). It runs again when the approved call is about to
   * run: a card that came out different (the order changed meanwhile) runs nothing, and the model is
   * told. It must not show what the user's capabilities do not let them read. @default none: a card
   * with the input only
   */
  prepareApproval?(input: Input, context: ChatToolContext): Promise<PreparedApproval>;
}

/** Declares a tool with its input type inferred from the schema. */
export function defineChatTool<InputSchema extends z.ZodType, Output>(
  definition: Omit<ChatToolDefinition<z.infer<InputSchema>, Output>, 'inputSchema'> & { inputSchema: InputSchema },
): ChatToolDefinition<z.infer<InputSchema>, Output> & { inputSchema: InputSchema } {
  // TypeScript cannot see that a generic `InputSchema` is a `ZodType` of its own output; it is by definition.
  return definition as ChatToolDefinition<z.infer<InputSchema>, Output> & { inputSchema: InputSchema };
}
