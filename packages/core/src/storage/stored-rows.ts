import type { UIMessage } from 'ai';
import type {
  ApprovalOutcome,
  ApprovalRecord,
  ApprovalState,
  ApprovalStepUp,
} from '../chat/approval/approval-store.js';
import type { StepUpAtProvider, StepUpMethod } from '../step-up/step-up-proof.js';
import type { AuditRecord } from '../audit/audit-store.js';
import type { ChatSessionRecord, TurnStatus } from '../chat/conversation/chat-store.js';
import type { MessageTree } from '../chat/conversation/message-tree.js';
import { DeskpilotError } from '../errors/deskpilot-error.js';

export { messagePreview } from '../chat/conversation/message-preview.js';
import {
  accountTokenPurposePattern,
  type AccountTokenPurpose,
  type AccountTokenRecord,
} from '../session/account-token-store.js';
import type { InvitationRecord } from '../team/invitation-store.js';
import type { StoredRolePolicy } from '../team/role-policy.js';
import type { SessionRecord } from '../session/session-store.js';
import type { Account, Membership } from '../session/user-directory.js';

/** One row a SQL driver returned: column name → value. */
export type StoredRow = Record<string, unknown>;

/** How a driver hands over JSON columns: parsed (`pg`, PGlite: `jsonb`) or as text to parse (SQLite). */
export interface StoredRowOptions {
  /** JSON columns arrive as text. @default false */
  jsonAsText?: boolean;
}

/** Typed, checked access to the columns of one stored row. */
export interface StoredRowReader {
  text(column: string): string;
  nullableText(column: string): string | null;
  /** A safe integer (epoch milliseconds, versions). */
  integer(column: string): number;
  nullableInteger(column: string): number | null;
  oneOf<Value extends string>(column: string, values: readonly Value[]): Value;
  /** A boolean: `true`/`false`, or SQLite's 1/0. */
  flag(column: string): boolean;
  /** A JSON value that passes `check` (parsed first when JSON arrives as text). */
  json<Value>(column: string, check: (value: unknown) => value is Value, expected: string): Value;
}

/**
 * Reads a row the database returned. A value of the wrong shape (a row edited by hand, a bad
 * migration, JSON that does not parse) is a `store_unavailable` error naming the record kind, never a
 * crash deeper in. For store implementations.
 *
 * @example
 * const read = readStoredRow('session', row);
 * const expiresAt = read.integer('expires_at');
 */
export function readStoredRow(what: string, row: StoredRow, options: StoredRowOptions = {}): StoredRowReader {
  const fail = (column: string, expected: string): never => {
    const id = typeof row.id === 'string' ? ` ${JSON.stringify(row.id)}` : '';
    throw new DeskpilotError('store_unavailable', {
      detail: `A stored ${what} is corrupted and cannot be read.`,
      cause: new TypeError(`Stored ${what}${id}: column "${column}" is not ${expected}.`),
    });
  };
  const reader: StoredRowReader = {
    text: (column) => (typeof row[column] === 'string' ? (row[column] as string) : fail(column, 'a string')),
    nullableText: (column) => (row[column] === null ? null : reader.text(column)),
    integer: (column) => (Number.isSafeInteger(row[column]) ? (row[column] as number) : fail(column, 'a safe integer')),
    nullableInteger: (column) => (row[column] === null ? null : reader.integer(column)),
    flag: (column) =>
      row[column] === true || row[column] === 1
        ? true
        : row[column] === false || row[column] === 0
          ? false
          : fail(column, 'a flag'),
    oneOf: (column, values) =>
      values.includes(row[column] as never)
        ? (row[column] as (typeof values)[number])
        : fail(column, `one of ${values.join(', ')}`),
    json(column, check, expected) {
      let value = row[column];
      if (options.jsonAsText) {
        try {
          value = JSON.parse(reader.text(column));
        } catch {
          return fail(column, expected);
        }
      }
      return check(value) ? value : fail(column, expected);
    },
  };
  return reader;
}

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for an object whose values all have the given `typeof`. */
export function isRecordOf<Type extends 'string' | 'boolean'>(type: Type) {
  return (value: unknown): value is Record<string, Type extends 'string' ? string : boolean> =>
    isJsonObject(value) && Object.values(value).every((entry) => typeof entry === type);
}

/** Any JSON value, `null` included. */
export function isJsonValue(_value: unknown): _value is unknown {
  return true;
}

/** The columns of a session, in the order {@link sessionFromRow} reads them. */
export const sessionColumns: readonly string[] = [
  'id',
  'secret_hash',
  'user_id',
  'project_key',
  'client_id',
  'created_at',
  'expires_at',
  'idle_expires_at',
  'version',
  'client_address',
  'user_agent',
];

/** A session record from a row holding {@link sessionColumns}. */
export function sessionFromRow(row: StoredRow, options?: StoredRowOptions): SessionRecord {
  const read = readStoredRow('session', row, options);
  return {
    id: read.text('id'),
    secretHash: read.text('secret_hash'),
    userId: read.text('user_id'),
    projectKey: read.text('project_key'),
    clientId: read.text('client_id'),
    createdAt: read.integer('created_at'),
    expiresAt: read.integer('expires_at'),
    idleExpiresAt: read.integer('idle_expires_at'),
    version: read.integer('version'),
    ...optionalText('clientAddress', read.nullableText('client_address')),
    ...optionalText('userAgent', read.nullableText('user_agent')),
  };
}

/** `{ [name]: value }`, or nothing for null: a record's optional field as a row's nullable column. */
function optionalText<Name extends string>(name: Name, value: string | null): { [key in Name]?: string } {
  return (value === null ? {} : { [name]: value }) as { [key in Name]?: string };
}

function isMemberships(value: unknown): value is Membership[] {
  return (
    Array.isArray(value) &&
    value.every(
      (entry) =>
        isJsonObject(entry) && ['projectKey', 'clientId', 'role'].every((key) => typeof entry[key] === 'string'),
    )
  );
}

/** An account deep-frozen: nobody can change it, and a cached one is shared safely. */
export function freezeAccount(account: Account): Account {
  return Object.freeze({
    user: Object.freeze(account.user),
    memberships: Object.freeze(
      account.memberships.map((membership) => Object.freeze(membership)),
    ) as Account['memberships'],
  });
}

/**
 * A deep-frozen account from a row with the user's id (in `idColumn`), `email`, `name`,
 * `email_verified_at` (epoch milliseconds or null) and `memberships` (a JSON list of
 * `{ projectKey, clientId, role }`).
 */
export function accountFromRow(row: StoredRow, options: StoredRowOptions & { idColumn?: string } = {}): Account {
  const read = readStoredRow('user', row, options);
  return freezeAccount({
    user: {
      id: read.text(options.idColumn ?? 'id'),
      email: read.text('email'),
      name: read.text('name'),
      emailVerified: read.nullableInteger('email_verified_at') !== null,
    },
    memberships: read.json('memberships', isMemberships, 'a list of memberships'),
  });
}

const turnStatuses: readonly TurnStatus[] = ['complete', 'aborted', 'awaiting_approval', 'budget_exhausted', 'failed'];

/** The columns of a conversation, in the order {@link chatSessionFromRow} reads them. */
export const chatSessionColumns: readonly string[] = [
  'id',
  'user_email',
  'project_key',
  'working_memory',
  'last_turn_status',
  'created_at',
  'updated_at',
  'version',
  'title',
  'archived_at',
  'deleted_at',
];

/** A conversation from a row holding {@link chatSessionColumns}. */
export function chatSessionFromRow(row: StoredRow, options?: StoredRowOptions): ChatSessionRecord {
  const read = readStoredRow('chat session', row, options);
  return {
    id: read.text('id'),
    userEmail: read.text('user_email'),
    projectKey: read.text('project_key'),
    workingMemory: read.json('working_memory', isRecordOf('string'), 'an object of strings'),
    lastTurnStatus: row.last_turn_status === null ? null : read.oneOf('last_turn_status', turnStatuses),
    createdAt: read.integer('created_at'),
    updatedAt: read.integer('updated_at'),
    version: read.integer('version'),
    title: read.nullableText('title'),
    archivedAt: read.nullableInteger('archived_at'),
    deletedAt: read.nullableInteger('deleted_at'),
  };
}

/** True for a value shaped like a stored UI message (`id`, `role`, `parts`). */
export function isStoredMessage(value: unknown): value is UIMessage {
  return (
    isJsonObject(value) && typeof value.id === 'string' && typeof value.role === 'string' && Array.isArray(value.parts)
  );
}

/** A UI message from a row's `message` column. */
export function messageFromRow(row: StoredRow, options?: StoredRowOptions): UIMessage {
  return readStoredRow('chat message', row, options).json('message', isStoredMessage, 'a UI message');
}

const approvalStates: readonly ApprovalState[] = ['pending', 'executing', 'done', 'denied'];
const stepUpMethods: readonly StepUpMethod[] = ['passkey', 'password', 'recent-sign-in'];

/** The columns of an approval, in the order {@link approvalFromRow} reads them. */
export const approvalColumns: readonly string[] = [
  'id',
  'chat_session_id',
  'user_email',
  'project_key',
  'tool_name',
  'tool_call_id',
  'input',
  'input_hash',
  'capabilities',
  'state',
  'outcome',
  'reason',
  'created_at',
  'expires_at',
  'decided_by',
  'decided_at',
  'decided_session',
  'step_up_method',
  'step_up_credential',
  'step_up_at',
  'step_up_provider',
];

function isOutcome(value: unknown): value is ApprovalOutcome | null {
  if (value === null) return true;
  if (!isJsonObject(value)) return false;
  // `output: undefined` is dropped by JSON: an output outcome may lack the key.
  return value.type === 'output' || (value.type === 'error' && typeof value.message === 'string');
}

// `undefined` has no JSON spelling: stored as JSON null rather than failing a NOT NULL column.
const json = (value: unknown) => JSON.stringify(value) ?? 'null';

/**
 * The values of an approval in {@link approvalColumns} order, for an `INSERT`: its JSON columns as
 * JSON text (`input`, `capabilities`, `outcome`), absent ones as null.
 */
export function approvalRowValues(record: ApprovalRecord): Array<string | number | null> {
  return [
    record.id,
    record.chatSessionId,
    record.userEmail,
    record.projectKey,
    record.toolName,
    record.toolCallId,
    json(record.input),
    record.inputHash,
    json(record.capabilities),
    record.state,
    record.outcome == null ? null : json(record.outcome),
    record.reason ?? null,
    record.createdAt,
    record.expiresAt,
    record.decision?.by ?? null,
    record.decision?.at ?? null,
    record.decision?.session ?? null,
    ...stepUpRowValues(record.decision?.stepUp),
  ];
}

/**
 * The step-up columns of a decision (`step_up_method`, `step_up_credential`, `step_up_at`, and
 * `step_up_provider` as JSON text): nulls without one.
 */
export function stepUpRowValues(
  stepUp: ApprovalStepUp | undefined,
): [string | null, string | null, number | null, string | null] {
  if (!stepUp) return [null, null, null, null];
  return [stepUp.method, stepUp.credentialId, stepUp.at, stepUp.atProvider ? json(stepUp.atProvider) : null];
}

/** A provider's part of a step-up, as stored: the provider's id, `authTime`, `sid` and `jti`. */
function isStepUpAtProvider(value: unknown): value is StepUpAtProvider {
  if (!isJsonObject(value)) return false;
  const { provider, authTime, sid, jti } = value;
  const id = (field: unknown) => field === null || typeof field === 'string';
  return typeof provider === 'string' && Number.isSafeInteger(authTime) && id(sid) && id(jti);
}

/** The JSON text an approval's `outcome` is stored as. */
export const outcomeJson = (outcome: ApprovalOutcome): string => json(outcome);

/** An approval from a row holding {@link approvalColumns}. */
export function approvalFromRow(row: StoredRow, options?: StoredRowOptions): ApprovalRecord {
  const read = readStoredRow('approval', row, options);
  return {
    id: read.text('id'),
    chatSessionId: read.text('chat_session_id'),
    userEmail: read.text('user_email'),
    projectKey: read.text('project_key'),
    toolName: read.text('tool_name'),
    toolCallId: read.text('tool_call_id'),
    input: read.json('input', isJsonValue, 'JSON'),
    inputHash: read.text('input_hash'),
    capabilities: read.json('capabilities', isRecordOf('boolean'), 'an object of booleans'),
    state: read.oneOf('state', approvalStates),
    outcome: row.outcome === null ? null : read.json('outcome', isOutcome, 'an approval outcome'),
    reason: read.nullableText('reason'),
    createdAt: read.integer('created_at'),
    expiresAt: read.integer('expires_at'),
    decision:
      row.decided_at === null
        ? null
        : {
            by: read.nullableText('decided_by'),
            at: read.integer('decided_at'),
            session: read.nullableText('decided_session'),
            ...(row.step_up_at == null
              ? {}
              : {
                  stepUp: {
                    method: read.oneOf('step_up_method', stepUpMethods),
                    credentialId: read.nullableText('step_up_credential'),
                    at: read.integer('step_up_at'),
                    ...(row.step_up_provider == null
                      ? {}
                      : { atProvider: read.json('step_up_provider', isStepUpAtProvider, 'a step-up at a provider') }),
                  },
                }),
          },
  };
}

/**
 * How the SQL stores keep a message's parent in its `parent_id` column: NULL for "the message stored
 * just before it in the conversation" (every message while the newest branch is the active one, and
 * all rows written before branches existed: nothing to rewrite), this value for a first message that
 * starts a branch (an edit of the first message), else the parent's id. A message id is never empty.
 */
export const firstMessageParent = '';

/**
 * A conversation's {@link MessageTree} from its message rows (`id`, `parent_id`, `message`) in the order
 * they were first saved, and the session's `active_message_id` (null: the newest message ends the
 * active branch). For store implementations.
 */
export function messageTreeFromRows(
  rows: readonly StoredRow[],
  activeMessageId: string | null,
  options?: StoredRowOptions,
): MessageTree {
  let previous: string | null = null;
  const messages = rows.map((row) => {
    const message = messageFromRow(row, options);
    const stored = readStoredRow('chat message', row, options).nullableText('parent_id');
    const parentId = stored === null ? previous : stored === firstMessageParent ? null : stored;
    previous = message.id;
    return { message, parentId };
  });
  return { messages, activeId: activeMessageId ?? previous };
}

/**
 * Whether message `id` is on the active branch, from a conversation's message rows (`id`,
 * `parent_id`, in the order saved) and its `active_message_id` (null: the newest message ends the
 * active branch). For store implementations: where an answer goes when its question may have been
 * edited away while it ran.
 */
export function isOnActiveBranch(rows: readonly StoredRow[], activeMessageId: string | null, id: string): boolean {
  const parents = new Map<string, string | null>();
  let previous: string | null = null;
  for (const row of rows) {
    const read = readStoredRow('chat message', row);
    const own = read.text('id');
    const stored = read.nullableText('parent_id');
    parents.set(own, stored === null ? previous : stored === firstMessageParent ? null : stored);
    previous = own;
  }
  for (let at = activeMessageId ?? previous, steps = 0; at !== null && steps <= parents.size; steps++) {
    if (at === id) return true;
    at = parents.get(at) ?? null;
  }
  return false;
}

/** The columns of a one-time link, in the order {@link accountTokenFromRow} reads them. */
export const accountTokenColumns: readonly string[] = [
  'token_hash',
  'purpose',
  'user_id',
  'email',
  'created_at',
  'expires_at',
];

function accountTokenPurpose(purpose: string): AccountTokenPurpose {
  if (!accountTokenPurposePattern.test(purpose))
    throw new DeskpilotError('store_unavailable', {
      detail: 'A stored account token is corrupted and cannot be read.',
      cause: new TypeError('Stored account token: column "purpose" is not a purpose.'),
    });
  return purpose;
}

/** A one-time link's record from a row holding {@link accountTokenColumns}. */
export function accountTokenFromRow(row: StoredRow): AccountTokenRecord {
  const read = readStoredRow('account token', row);
  return Object.freeze({
    tokenHash: read.text('token_hash'),
    // Any module's own purpose (a magic link's), spelled as one: a row with another is corrupt.
    purpose: accountTokenPurpose(read.text('purpose')),
    userId: read.text('user_id'),
    email: read.text('email'),
    createdAt: read.integer('created_at'),
    expiresAt: read.integer('expires_at'),
  });
}

/** The columns of an invitation, in the order {@link invitationFromRow} reads them and {@link invitationRowValues} lists them. */
export const invitationColumns: readonly string[] = [
  'id',
  'token_hash',
  'project_key',
  'client_id',
  'role',
  'email',
  'invited_by',
  'created_at',
  'expires_at',
];

/** An invitation from a row holding {@link invitationColumns}. */
export function invitationFromRow(row: StoredRow): InvitationRecord {
  const read = readStoredRow('invitation', row);
  return Object.freeze({
    id: read.text('id'),
    tokenHash: read.text('token_hash'),
    projectKey: read.text('project_key'),
    clientId: read.text('client_id'),
    role: read.text('role'),
    email: read.text('email'),
    invitedBy: read.text('invited_by'),
    createdAt: read.integer('created_at'),
    expiresAt: read.integer('expires_at'),
  });
}

/** The values of an invitation's row, in the order of {@link invitationColumns}. */
export function invitationRowValues(record: InvitationRecord): Array<string | number> {
  return [
    record.id,
    record.tokenHash,
    record.projectKey,
    record.clientId,
    record.role,
    record.email,
    record.invitedBy,
    record.createdAt,
    record.expiresAt,
  ];
}

/** A project's stored role policy from a row (`project_key`, `roles` as JSON, `version`, `updated_at`, `updated_by`). */
export function rolePolicyFromRow(row: StoredRow, options?: StoredRowOptions): StoredRolePolicy {
  const read = readStoredRow('role policy', row, options);
  return {
    projectKey: read.text('project_key'),
    roles: read.json('roles', isRoleFlags, 'roles with their flags'),
    version: read.integer('version'),
    updatedAt: read.integer('updated_at'),
    updatedBy: read.nullableText('updated_by'),
  };
}

const isRoleFlags = (value: unknown): value is Record<string, Record<string, boolean>> =>
  isJsonObject(value) &&
  Object.values(value).every(
    (flags) => isJsonObject(flags) && Object.values(flags).every((flag) => typeof flag === 'boolean'),
  );

/** The columns of an audit record, in the order {@link auditFromRow} reads them. */
export const auditColumns: readonly string[] = [
  'project_key',
  'seq',
  'at',
  'type',
  'actor',
  'session',
  'subject',
  'data',
  'prev_hash',
  'hash',
];

/** The values of an audit record in {@link auditColumns} order, for an `INSERT` (`data` as JSON text). */
export function auditRowValues(record: AuditRecord): Array<string | number | null> {
  return [
    record.projectKey,
    record.seq,
    record.at,
    record.type,
    record.actor,
    record.session,
    record.subject,
    JSON.stringify(record.data),
    record.prevHash,
    record.hash,
  ];
}

/** An audit record from a row holding {@link auditColumns}. */
export function auditFromRow(row: StoredRow, options?: StoredRowOptions): AuditRecord {
  const read = readStoredRow('audit record', row, options);
  return {
    projectKey: read.text('project_key'),
    seq: read.integer('seq'),
    at: read.integer('at'),
    type: read.text('type'),
    actor: read.nullableText('actor'),
    session: read.nullableText('session'),
    subject: read.nullableText('subject'),
    data: read.json('data', isJsonObject, 'a JSON object') as AuditRecord['data'],
    prevHash: read.text('prev_hash'),
    hash: read.text('hash'),
  };
}
