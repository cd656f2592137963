import type { TurnUsage } from './token-budget.js';
import type { TurnCost } from './turn-cost.js';

/** One model call's worth of usage as the chat handler hands it on: a turn's, or a title's. */
export interface UsageEntry {
  projectKey: string;
  /** The user the turn's context names (its `userEmail`). */
  user: string;
  /** `<provider>:<modelId>`, as the answer's metadata names it. */
  model: string;
  /** When it settled, epoch milliseconds. */
  at: number;
  kind: 'turn' | 'title';
  usage: TurnUsage;
  /** What it cost, when the handler prices turns and knows the model. */
  cost?: TurnCost;
  /** The tools the turn called, by name, once per call (none for a title). */
  tools: readonly string[];
}

/** An approval decided, as the chat handler hands it on: who was asked, on which tool, the outcome, and the wait. */
export interface ApprovalUsageEntry {
  projectKey: string;
  /** The user the approval was proposed to (its `userEmail`). */
  user: string;
  tool: string;
  /** `denied` covers every refusal but an expiry: by the user, an altered or revoked card, a step-up that failed. */
  outcome: 'approved' | 'denied' | 'expired';
  /** Milliseconds from the proposal to the decision. */
  waitedMs: number;
  /** When it was decided, epoch milliseconds. */
  at: number;
}

/**
 * Where the chat handler hands each settled turn and title call (`usage` of `createChatHandler`): the
 * roll-ups of `@deskpilot/usage` (`createPostgresUsageStore`, …). A failure is reported to `onError`,
 * never the turn's.
 */
export interface UsageRecorder {
  record(entry: UsageEntry): Promise<void>;
  /** Each approval's first decision (approved, denied, expired), when the recorder keeps them. */
  recordApproval?(entry: ApprovalUsageEntry): Promise<void>;
}

/** How long a recorder's write is waited for (the answer's `finish`, an approval's decision). */
const recordTimeoutMs = 5_000;

/**
 * Runs a recorder's write, waited for at most 5 s: a failure or a hang is reported to `onError`, never
 * thrown (the turn or the approval goes on).
 */
export async function recordBounded(write: () => Promise<unknown>, onError: (error: unknown) => void): Promise<void> {
  // A failure is a value here (a recorder may even throw before it returns a promise).
  const recording = Promise.resolve()
    .then(write)
    .then(
      () => undefined,
      (error: unknown) => error ?? new Error('the usage recorder failed'),
    );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Error>((resolve) => {
    timer = setTimeout(() => resolve(new Error(`the usage recorder took over ${recordTimeoutMs} ms`)), recordTimeoutMs);
  });
  const outcome = await Promise.race([recording, late]);
  clearTimeout(timer);
  if (outcome === undefined) return;
  onError(outcome);
  // Gone past the wait: its own failure, if it fails later, is reported too.
  void recording.then((error) => error !== undefined && error !== outcome && onError(error));
}
