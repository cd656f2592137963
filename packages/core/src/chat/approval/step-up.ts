import { stepUpBinding, verifyStepUpProof, type StepUpMethod, type StepUpProof } from '../../step-up/step-up-proof.js';
import type { ApprovalCard } from '../tools/chat-tool.js';
import type { ApprovalRecord, ApprovalStepUp } from './approval-store.js';

/** A write call the step-up policy is asked about: the tool, its input, and the card it is shown with. */
export interface StepUpCall {
  toolName: string;
  input: unknown;
  /** The capability the tool needs. */
  capability: string;
  /** The card the call is (or was) proposed with, when its tool has a pre-check. */
  card: ApprovalCard | undefined;
}

/**
 * Whether approving a call needs a fresh user verification. Must be deterministic: it is asked again
 * when the answer comes. `tools`, when present, names the tools it can ask for: the handler refuses to
 * start when one is not a tool it has (a misspelt name would silently ask for nothing).
 */
export type StepUpPolicy = ((call: StepUpCall) => boolean) & { readonly tools?: readonly string[] };

/** A rule of {@link stepUpPolicy}: always, or when the card's amount is above a number of minor units. */
export type StepUpRule = true | { amountAbove: number };

/**
 * A step-up policy from rules per tool: `true` asks every time, `{ amountAbove }` when the card's
 * amount (in minor units, the currency of the order) is above it. A call whose card names no amount
 * asks too: what cannot be measured is treated as over the line. Tools not named never ask.
 *
 * @example
 * const policy = stepUpPolicy({ cancelOrder: true, refundOrder: { amountAbove: 10_000 } });
 */
export function stepUpPolicy(rules: Readonly<Record<string, StepUpRule>>): StepUpPolicy {
  for (const [tool, rule] of Object.entries(rules))
    if (rule !== true && !(Number.isSafeInteger(rule?.amountAbove) && rule.amountAbove >= 0))
      throw new TypeError(`stepUpPolicy: the rule of ${tool} must be true or { amountAbove: a whole number ≥ 0 }`);
  const table = new Map(Object.entries(rules));
  const policy = ({ toolName, card }: StepUpCall) => {
    const rule = table.get(toolName);
    if (rule === undefined) return false;
    if (rule === true) return true;
    const amount = card?.amount?.minor;
    return !(typeof amount === 'number' && amount <= rule.amountAbove);
  };
  return Object.assign(policy, { tools: [...table.keys()] });
}

/** Throws a TypeError when a policy names a tool the handler does not have. */
export function checkStepUpTools(policy: StepUpPolicy, toolNames: readonly string[]): void {
  const unknown = (policy.tools ?? []).filter((tool) => !toolNames.includes(tool));
  if (unknown.length > 0)
    throw new TypeError(
      `stepUp.policy names tools this chat does not have: ${unknown.join(', ')} (it has ${toolNames.join(', ')})`,
    );
}

/** Asks a policy, failing closed: a policy that throws asks for a step-up (and is reported). */
export function asksStepUp(policy: StepUpPolicy, call: StepUpCall, onError: (error: unknown) => void): boolean {
  try {
    return policy(call) !== false;
  } catch (error) {
    onError(error);
    return true;
  }
}

/** Checks the proofs a client sends with its approval answers. */
export interface StepUpVerifier {
  /** The proof a token carries, or null when it is none (forged, expired, garbled). Never throws for bad input. */
  verify(token: unknown): Promise<StepUpProof | null>;
}

/** Options of {@link createStepUpVerifier}. */
export interface StepUpVerifierOptions {
  /** The secret the session service signs proofs with (its `stepUp.secret`), at least 32 characters. */
  secret: string;
  /** Clock in epoch milliseconds. @default Date.now */
  now?: () => number;
}

/**
 * A {@link StepUpVerifier} for proofs the session service signed with a shared secret.
 *
 * @example
 * const verifier = createStepUpVerifier({ secret: process.env.STEP_UP_SECRET! });
 */
export function createStepUpVerifier(options: StepUpVerifierOptions): StepUpVerifier {
  const { secret } = options;
  if (typeof secret !== 'string' || secret.length < 32)
    throw new TypeError('createStepUpVerifier: secret must be at least 32 characters');
  return { verify: (token) => verifyStepUpProof(token, secret, options.now ? { now: options.now } : {}) };
}

/** Options of `createChatHandler({ stepUp })`: which approvals need a fresh user verification, and how it is checked. */
export interface ChatStepUpOptions {
  policy: StepUpPolicy;
  verifier: StepUpVerifier;
}

/** What a card asks the browser for when its approval needs a step-up (`approval.descriptor.stepUp`). */
export interface StepUpRequest {
  /** The approval's {@link stepUpBinding}: what the session service's step-up routes verify over. */
  binding: string;
}

/** Why a step-up did not pass: no proof came with the answer, or it was not a proof for this approval by this person. */
export type StepUpRefusal = 'step_up_required' | 'step_up_failed';

/**
 * Checks the proof an answer came with against the approval it approves: signed, unexpired, over this
 * approval's binding, by its user, and — when the request names its sign-in session — from that session.
 */
export async function checkStepUp(
  verifier: StepUpVerifier,
  token: unknown,
  record: ApprovalRecord,
  signInSessionId: string | undefined,
): Promise<{ ok: true; stepUp: ApprovalStepUp } | { ok: false; reason: StepUpRefusal }> {
  if (token === undefined) return { ok: false, reason: 'step_up_required' };
  const proof = await verifier.verify(token);
  if (
    !proof ||
    proof.binding !== stepUpBinding(record) ||
    proof.email !== record.userEmail ||
    (signInSessionId !== undefined && proof.sessionId !== signInSessionId)
  )
    return { ok: false, reason: 'step_up_failed' };
  const { method, credentialId, verifiedAt: at, atProvider } = proof;
  return { ok: true, stepUp: { method, credentialId, at, ...(atProvider ? { atProvider } : {}) } };
}

export type { StepUpMethod };
