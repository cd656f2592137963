import type { SharedEvent } from '../events/deskpilot-event.js';
import type { SessionEvent } from '../session/session-event.js';
import type { ApprovalDenialReason } from './approval/create-approval-gate.js';
import type { TurnStatus } from './conversation/chat-store.js';
import type { TurnUsage } from './handler/token-budget.js';
import type { TurnCost } from './handler/turn-cost.js';
import type { BudgetWarning } from './handler/budget-warning.js';

/** What the chat handler reports as it works, for metrics and audit logs (`onEvent`). Plain data. */
export type ChatEvent =
  /** The model began answering a chat turn: its stream is open. */
  | { type: 'turn-started'; model: string }
  /**
   * A chat turn's stream ended and its answer was saved (`saved: false`: saving failed): the tokens
   * this request's model calls used (estimated when the provider reported none), and what they cost
   * when the handler prices turns (`priceTurn`) and knows the model.
   */
  | {
      type: 'turn-ended';
      model: string;
      /** The project the turn ran in. */
      projectKey: string;
      status: TurnStatus;
      durationMs: number;
      saved: boolean;
      usage?: TurnUsage;
      cost?: TurnCost;
    }
  /** A conversation's title was written by a model (`titles.model`): what the call used, and cost when priced. */
  | { type: 'title-written'; model: string; projectKey: string; usage: TurnUsage; cost?: TurnCost }
  /**
   * A turn found its project's count for the period past a budget's warning threshold
   * (`createProjectBudgets`' `warnAt`): told once per budget and period in a process, before the budget refuses.
   */
  | ({ type: 'budget-warning' } & BudgetWarning)
  /** A tool ran (`succeeded`, `failed`), or was refused before running (no permission, no approval). */
  | { type: 'tool-executed'; tool: string; outcome: 'succeeded' | 'failed' | 'refused' }
  /** The model proposed a write that waits for the user's approval. */
  | { type: 'approval-proposed'; tool: string }
  /** The user's answer to a proposed write, as the approval gate reviewed it. */
  | {
      type: 'approval-reviewed';
      tool: string;
      outcome: 'approved' | 'denied' | 'expired';
      reason?: ApprovalDenialReason | 'unanswered';
    }
  | SharedEvent;

/** Receives {@link ChatEvent}s; it must not throw. */
export type ChatEventListener = (event: ChatEvent) => void;

/**
 * Everything a Deskpilot handler reports: the session handler's events and the chat handler's. One
 * listener of these serves both (`onEvent` of either takes it).
 */
export type DeskpilotEvent = SessionEvent | ChatEvent;

/** Receives {@link DeskpilotEvent}s; it must not throw (what it throws is reported as an unexpected error, never to the client). */
export type DeskpilotEventListener = (event: DeskpilotEvent) => void;
