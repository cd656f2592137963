import type { ChatStore, TurnStatus } from '../conversation/chat-store.js';
import { withRetries } from '../conversation/with-retries.js';
import { isAwaitingApproval, type ChatMessage } from './chat-message.js';

/** How a turn's stream ended. */
export interface TurnEnd {
  message: ChatMessage;
  isAborted: boolean;
  finishReason?: string | undefined;
  /** Whether the tool loop ran out of steps. */
  budgetExhausted: boolean;
  /** Whether the stream carried an error of the model call (a provider's 5xx or 429 after the retries, a timeout). */
  failed?: boolean;
}

/** The status a turn is recorded with (pure). */
export function turnStatusOf(end: TurnEnd): TurnStatus {
  if (end.isAborted) return 'aborted';
  if (end.finishReason === 'error' || end.failed) return 'failed';
  if (end.message.parts.some(isAwaitingApproval)) return 'awaiting_approval';
  return end.budgetExhausted ? 'budget_exhausted' : 'complete';
}

/** Options of {@link persistTurn}. */
export interface PersistTurnOptions {
  store: ChatStore;
  sessionId: string;
  message: ChatMessage;
  status: TurnStatus;
  /** The message the answer follows (its question, or the last message it was answered from). */
  after?: string | undefined;
  /** A title for the conversation when it has none yet, saved with the answer (in the same write where the store has `saveTurn`). */
  title?: string | undefined;
  /** Told when a title written apart from the answer (a store without `saveTurn`) could not be saved: the turn is saved all the same. */
  onError?: ((error: unknown) => void) | undefined;
  now: () => number;
  /** Waits between save attempts. @default [50, 250, 1000] */
  retryDelaysMs?: readonly number[];
}

/**
 * What a save did: `saved`; `status_unsaved` (the answer is saved, the conversation's last turn
 * status is not); `unsaved` (the answer is lost: the status is set to `failed` where it can be).
 */
export type PersistTurnResult =
  { kind: 'saved' } | { kind: 'status_unsaved'; error: unknown } | { kind: 'unsaved'; error: unknown };

/**
 * Saves the assistant's answer with its status, and the conversation's last turn status (and title,
 * when given): in one write where the store has `saveTurn`, otherwise the answer first. Retried through a brief store outage.
 */
export async function persistTurn(options: PersistTurnOptions): Promise<PersistTurnResult> {
  const { store, sessionId, status } = options;
  const retries = { delaysMs: options.retryDelaysMs };
  const saveStatus = (value: typeof status) =>
    withRetries(() => store.updateSession(sessionId, { lastTurnStatus: value, updatedAt: options.now() }), retries);
  const message = { ...options.message, metadata: { ...options.message.metadata, status } };
  if (store.saveTurn) {
    try {
      await withRetries(
        () =>
          store.saveTurn!(
            sessionId,
            message,
            { lastTurnStatus: status, updatedAt: options.now(), title: options.title },
            options.after,
          ),
        retries,
      );
      return { kind: 'saved' };
    } catch (error) {
      await saveStatus('failed').catch(() => {});
      return { kind: 'unsaved', error };
    }
  }
  try {
    await withRetries(() => store.upsertMessages(sessionId, [message], options.after), retries);
  } catch (error) {
    // The next read of the history says so.
    await saveStatus('failed').catch(() => {});
    return { kind: 'unsaved', error };
  }
  try {
    await saveStatus(status);
  } catch (error) {
    return { kind: 'status_unsaved', error };
  }
  const { title } = options;
  if (title !== undefined)
    await withRetries(() => store.updateConversation(sessionId, { title, onlyIfUntitled: true }), retries).catch(
      (error: unknown) => options.onError?.(error),
    );
  return { kind: 'saved' };
}
