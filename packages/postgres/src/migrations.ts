/** One schema change: its statements run in order, in the transaction of {@link migrate}. */
export interface Migration {
  /** Applied in ascending order, each exactly once per database (schema). */
  version: number;
  name: string;
  statements: readonly string[];
}

// Every table carries the `deskpilot_` prefix: the schema often lives in a studio backend's own
// database, beside its `users` and `sessions`. Epoch milliseconds are `bigint`; documents `jsonb`.
const initialSchema: Migration = {
  version: 1,
  name: 'initial schema',
  statements: [
    `CREATE TABLE deskpilot_sessions (
      id text PRIMARY KEY,
      secret_hash text NOT NULL,
      user_id text NOT NULL,
      project_key text NOT NULL,
      client_id text NOT NULL,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL,
      idle_expires_at bigint NOT NULL,
      version integer NOT NULL
    )`,
    `CREATE INDEX deskpilot_sessions_user_id ON deskpilot_sessions (user_id)`,
    // deleteExpired filters on exactly this expression, so one index serves both expiries (dropped by
    // migration 2: it kept renewals from being heap-only updates).
    `CREATE INDEX deskpilot_sessions_expiry ON deskpilot_sessions ((least(expires_at, idle_expires_at)))`,

    `CREATE TABLE deskpilot_users (
      id text PRIMARY KEY,
      email text NOT NULL UNIQUE,
      name text NOT NULL,
      password_hash text NOT NULL
    )`,
    `CREATE TABLE deskpilot_memberships (
      user_id text NOT NULL REFERENCES deskpilot_users (id) ON DELETE CASCADE,
      position integer NOT NULL,
      project_key text NOT NULL,
      client_id text NOT NULL,
      role text NOT NULL,
      PRIMARY KEY (user_id, position)
    )`,

    `CREATE TABLE deskpilot_chat_sessions (
      id text PRIMARY KEY,
      user_email text NOT NULL,
      project_key text NOT NULL,
      working_memory jsonb NOT NULL DEFAULT '{}',
      last_turn_status text CHECK (last_turn_status IN ('complete', 'aborted', 'awaiting_approval', 'budget_exhausted', 'failed')),
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      version integer NOT NULL
    )`,
    // Message ids come from clients: they are unique per conversation only.
    `CREATE TABLE deskpilot_chat_messages (
      session_id text NOT NULL REFERENCES deskpilot_chat_sessions (id) ON DELETE CASCADE,
      id text NOT NULL,
      position bigint GENERATED ALWAYS AS IDENTITY,
      message jsonb NOT NULL,
      PRIMARY KEY (session_id, id)
    )`,
    `CREATE INDEX deskpilot_chat_messages_order ON deskpilot_chat_messages (session_id, position)`,

    // No foreign key to chat sessions: an approval outlives nothing it points to, and the gate checks
    // ownership itself. `position` breaks ties between approvals created in the same millisecond.
    `CREATE TABLE deskpilot_approvals (
      id text PRIMARY KEY,
      position bigint GENERATED ALWAYS AS IDENTITY,
      chat_session_id text NOT NULL,
      user_email text NOT NULL,
      project_key text NOT NULL,
      tool_name text NOT NULL,
      tool_call_id text NOT NULL,
      input jsonb NOT NULL,
      input_hash text NOT NULL,
      capabilities jsonb NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'executing', 'done', 'denied')),
      outcome jsonb,
      reason text,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL
    )`,
    `CREATE INDEX deskpilot_approvals_by_session ON deskpilot_approvals (chat_session_id, state, created_at, position)`,
    `CREATE INDEX deskpilot_approvals_expires_at ON deskpilot_approvals (expires_at)`,
  ],
};

// Renewing a session changes `idle_expires_at` only. With no index on it, that is a HOT update: the new
// row version goes in the same page and no index is written (the expiry index made each renewal an
// insert into every index of the table). Free space in each page keeps it there. `deleteExpired` then
// scans the table, once in a while, instead of the index.
const hotRenewals: Migration = {
  version: 2,
  name: 'session renewals as heap-only updates',
  statements: [`DROP INDEX deskpilot_sessions_expiry`, `ALTER TABLE deskpilot_sessions SET (fillfactor = 85)`],
};

// Storage quotas count each message's bytes (the UTF-8 length of its JSON as stored), per conversation
// and per user: kept beside the message, so a quota check sums integers, never re-serialises documents.
// Nullable with no default and no backfill, so adding it rewrites nothing and locks the table only for
// an instant: rows written before it (or by a replica still on an older release) are measured on the
// fly until they are written again. The user index is built in the migration's transaction: it locks
// writes to chat sessions while it builds (a moment for most tables).
const messageBytes: Migration = {
  version: 3,
  name: 'message sizes for storage quotas',
  statements: [
    `ALTER TABLE deskpilot_chat_messages ADD COLUMN bytes integer`,
    `CREATE INDEX deskpilot_chat_sessions_user_email ON deskpilot_chat_sessions (user_email)`,
  ],
};

// The conversation list reads one owner's conversations in a project, newest activity first, a page at
// a time (keyset): one partial index for the list and one for the archive, each an index range scan
// that stops after the page. The retention sweep finds archived conversations by `archived_at`. The
// columns are nullable with no default: adding them rewrites nothing. The indexes are built in the
// migration's transaction and lock writes to chat sessions while they build.
const conversations: Migration = {
  version: 4,
  name: 'conversations: titles, archive, tombstones',
  statements: [
    `ALTER TABLE deskpilot_chat_sessions ADD COLUMN title text, ADD COLUMN archived_at bigint, ADD COLUMN deleted_at bigint`,
    `CREATE INDEX deskpilot_chat_sessions_listed ON deskpilot_chat_sessions (user_email, project_key, updated_at DESC, id DESC)
      WHERE archived_at IS NULL AND deleted_at IS NULL`,
    `CREATE INDEX deskpilot_chat_sessions_archived ON deskpilot_chat_sessions (user_email, project_key, updated_at DESC, id DESC)
      WHERE archived_at IS NOT NULL AND deleted_at IS NULL`,
    `CREATE INDEX deskpilot_chat_sessions_retention ON deskpilot_chat_sessions (archived_at)
      WHERE archived_at IS NOT NULL AND deleted_at IS NULL`,
  ],
};

// Who decided an approval, when, from which sign-in session: nullable columns, nothing rewritten.
const approvalDecisions: Migration = {
  version: 5,
  name: 'approval decisions',
  statements: [
    `ALTER TABLE deskpilot_approvals ADD COLUMN decided_by text, ADD COLUMN decided_at bigint, ADD COLUMN decided_session text`,
  ],
};

// Edits and regenerations as branches. A message's parent: NULL for the message stored just before it
// (every row written before this migration included: nothing is rewritten, and a conversation nobody
// branched keeps writing NULL), '' for a new first message, else the parent's id. A conversation's
// active branch ends at active_message_id, or at its newest message when NULL. Nullable, no default.
const messageBranches: Migration = {
  version: 6,
  name: 'message branches',
  statements: [
    `ALTER TABLE deskpilot_chat_messages ADD COLUMN parent_id text`,
    `ALTER TABLE deskpilot_chat_sessions ADD COLUMN active_message_id text`,
  ],
};

// What the conversation list shows of each message, kept beside it: the list reads a few hundred
// characters per conversation instead of its whole last message (a file can make one megabytes).
// Nullable, no default: rows written before it are read as before (their preview computed from the
// message) until they are written again.
const messagePreviews: Migration = {
  version: 7,
  name: 'message previews',
  statements: [`ALTER TABLE deskpilot_chat_messages ADD COLUMN preview text`],
};

// When a user proved they receive mail at their address (NULL: not yet), and one-time links (password
// reset, email verification) kept as a digest of their token, the key: a leaked table opens no account,
// and a link is found by its digest, never compared character by character. Nullable column, no default.
// `purpose` is checked by the code that reads it: a later one-time secret needs no migration.
const accountRecovery: Migration = {
  version: 8,
  name: 'account recovery and verification',
  statements: [
    `ALTER TABLE deskpilot_users ADD COLUMN email_verified_at bigint`,
    `CREATE TABLE deskpilot_account_tokens (
      token_hash text PRIMARY KEY,
      purpose text NOT NULL,
      user_id text NOT NULL,
      email text NOT NULL,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL
    )`,
    `CREATE INDEX deskpilot_account_tokens_user ON deskpilot_account_tokens (user_id, purpose)`,
    `CREATE INDEX deskpilot_account_tokens_expiry ON deskpilot_account_tokens (expires_at)`,
  ],
};

// Passkeys (WebAuthn credentials): the public key and the signature counter, never anything secret.
// `position` orders a user's passkeys as they were added.
const passkeys: Migration = {
  version: 9,
  name: 'passkeys',
  statements: [
    `CREATE TABLE deskpilot_passkeys (
      id text PRIMARY KEY,
      position bigint GENERATED ALWAYS AS IDENTITY,
      user_id text NOT NULL,
      public_key text NOT NULL,
      counter bigint NOT NULL,
      transports jsonb NOT NULL,
      device_type text NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
      backed_up boolean NOT NULL,
      name text NOT NULL,
      created_at bigint NOT NULL,
      last_used_at bigint
    )`,
    `CREATE INDEX deskpilot_passkeys_user ON deskpilot_passkeys (user_id, position)`,
  ],
};

// Single sign-on: which person at which identity provider (issuer + subject) is which user. One user
// per person, one person per user at each provider: an address the provider hands to someone else
// never opens the account of the person it was linked to.
const identityLinks: Migration = {
  version: 10,
  name: 'identity links',
  statements: [
    `CREATE TABLE deskpilot_identity_links (
      issuer text NOT NULL,
      subject text NOT NULL,
      user_id text NOT NULL,
      linked_at bigint NOT NULL,
      PRIMARY KEY (issuer, subject),
      UNIQUE (issuer, user_id)
    )`,
    `CREATE INDEX deskpilot_identity_links_user ON deskpilot_identity_links (user_id)`,
  ],
};

// The fresh user verification an approval was approved with (step-up): how, which passkey, when.
// Nullable columns, nothing rewritten: earlier decisions and those without a step-up have none.
const approvalStepUp: Migration = {
  version: 11,
  name: 'approval step-up',
  statements: [
    `ALTER TABLE deskpilot_approvals ADD COLUMN step_up_method text, ADD COLUMN step_up_credential text, ADD COLUMN step_up_at bigint`,
  ],
};

// The audit trail: append-only records, one hash chain per project, and each chain's head (its last
// record, and how far retention pruned). `seq` counts from 1 per project.
const auditTrail: Migration = {
  version: 12,
  name: 'audit trail',
  statements: [
    `CREATE TABLE deskpilot_audit (
      project_key text NOT NULL,
      seq bigint NOT NULL,
      at bigint NOT NULL,
      type text NOT NULL,
      actor text,
      session text,
      subject text,
      data jsonb NOT NULL,
      prev_hash text NOT NULL,
      hash text NOT NULL,
      PRIMARY KEY (project_key, seq)
    )`,
    `CREATE INDEX deskpilot_audit_at ON deskpilot_audit (project_key, at)`,
    `CREATE TABLE deskpilot_audit_heads (
      project_key text PRIMARY KEY,
      seq bigint NOT NULL,
      hash text NOT NULL,
      pruned_through bigint NOT NULL
    )`,
  ],
};

// Teams: invitations (by the digest of their token, never the token), and memberships found by project
// (a project's member list, and the count of its admins each change checks).
const teams: Migration = {
  version: 13,
  name: 'teams',
  statements: [
    `CREATE TABLE deskpilot_invitations (
      id text PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      project_key text NOT NULL,
      client_id text NOT NULL,
      role text NOT NULL,
      email text NOT NULL,
      invited_by text NOT NULL,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL
    )`,
    `CREATE INDEX deskpilot_invitations_project ON deskpilot_invitations (project_key, created_at)`,
    `CREATE INDEX deskpilot_invitations_expiry ON deskpilot_invitations (expires_at)`,
    `CREATE INDEX deskpilot_memberships_project ON deskpilot_memberships (project_key, role)`,
  ],
};

// Where each session was signed in from (its client address and user agent), for the people who review
// their sessions and their team's. Nullable: sessions from before have none.
const sessionClients: Migration = {
  version: 14,
  name: 'session clients',
  statements: [`ALTER TABLE deskpilot_sessions ADD COLUMN client_address text, ADD COLUMN user_agent text`],
};

// Each project's role policy (role → capability flags), as its admins last set it; a project with no row
// has the built-in one.
const rolePolicies: Migration = {
  version: 15,
  name: 'role policies',
  statements: [
    `CREATE TABLE deskpilot_role_policies (
      project_key text PRIMARY KEY,
      roles jsonb NOT NULL,
      version bigint NOT NULL,
      updated_at bigint NOT NULL,
      updated_by text
    )`,
  ],
};

// Organisations above projects: each project in at most one, and the admins of each.
const organizations: Migration = {
  version: 16,
  name: 'organizations',
  statements: [
    `CREATE TABLE deskpilot_organization_projects (
      project_key text PRIMARY KEY,
      organization text NOT NULL
    )`,
    `CREATE INDEX deskpilot_organization_projects_organization ON deskpilot_organization_projects (organization)`,
    `CREATE TABLE deskpilot_organization_admins (
      organization text NOT NULL,
      user_id text NOT NULL,
      PRIMARY KEY (user_id, organization)
    )`,
  ],
};

// The turn each conversation runs now, while the handler marks them (embedded databases): what a
// process that starts after a crash records as aborted.
const runningTurns: Migration = {
  version: 18,
  name: 'running turns',
  statements: [
    `CREATE TABLE deskpilot_running_turns (
      session_id text PRIMARY KEY REFERENCES deskpilot_chat_sessions (id) ON DELETE CASCADE,
      turn_id text NOT NULL
    )`,
  ],
};

// A step-up at an identity provider, told apart from a sign-in here: which provider, its auth_time, and
// the ID token's sid and jti. Nullable: every other step-up, and those decided before, have none.
const approvalStepUpProvider: Migration = {
  version: 17,
  name: 'approval step-up provider',
  statements: [`ALTER TABLE deskpilot_approvals ADD COLUMN step_up_provider jsonb`],
};

// Running byte totals for the storage quotas, per conversation and per user, so a quota check reads
// one row instead of summing a user's whole history. Triggers keep them in the transaction of every
// write to a message, whichever code path (or an older replica) makes it: an insert adds its size, an
// update in place its change, a deletion (a tombstone, the retention sweep) takes its sizes off, one
// update per conversation and per user. A conversation row deleted outright first deletes its
// messages. Every path takes the totals' row locks in one order — the conversation's row first (the
// writers hold it already), then its total, then its user's — so concurrent writes queue and the
// store's own writes never deadlock. The functions keep the search_path of the migration, so a
// statement run from another schema's session counts in this one. The messages table is locked
// against writes first: a message an older replica stores while the totals are computed would be
// counted by neither. Rows written before migration 3 get their size here, once.
const chatByteTotals: Migration = {
  version: 19,
  name: 'chat byte totals',
  statements: [
    `LOCK TABLE deskpilot_chat_messages IN SHARE ROW EXCLUSIVE MODE`,
    `CREATE TABLE deskpilot_chat_conversation_bytes (
      session_id text PRIMARY KEY REFERENCES deskpilot_chat_sessions (id) ON DELETE CASCADE,
      bytes bigint NOT NULL
    )`,
    `CREATE TABLE deskpilot_chat_user_bytes (
      user_email text PRIMARY KEY,
      bytes bigint NOT NULL
    )`,
    `UPDATE deskpilot_chat_messages SET bytes = octet_length(message::text) WHERE bytes IS NULL`,
    `INSERT INTO deskpilot_chat_conversation_bytes (session_id, bytes)
      SELECT session_id, sum(bytes) FROM deskpilot_chat_messages GROUP BY session_id`,
    `INSERT INTO deskpilot_chat_user_bytes (user_email, bytes)
      SELECT s.user_email, sum(c.bytes) FROM deskpilot_chat_conversation_bytes c
      JOIN deskpilot_chat_sessions s ON s.id = c.session_id GROUP BY s.user_email`,
    `CREATE FUNCTION deskpilot_chat_count_bytes(conversation text, delta bigint) RETURNS void LANGUAGE sql
    SET search_path FROM CURRENT AS $$
      WITH counted AS (
        INSERT INTO deskpilot_chat_conversation_bytes AS total (session_id, bytes) VALUES (conversation, delta)
        ON CONFLICT (session_id) DO UPDATE SET bytes = total.bytes + excluded.bytes
        RETURNING session_id
      )
      INSERT INTO deskpilot_chat_user_bytes AS total (user_email, bytes)
      SELECT s.user_email, delta FROM counted JOIN deskpilot_chat_sessions s ON s.id = counted.session_id
      ON CONFLICT (user_email) DO UPDATE SET bytes = total.bytes + excluded.bytes
    $$`,
    `CREATE FUNCTION deskpilot_chat_message_written() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    BEGIN
      PERFORM deskpilot_chat_count_bytes(NEW.session_id, coalesce(NEW.bytes, octet_length(NEW.message::text))
        - CASE WHEN TG_OP = 'UPDATE' THEN coalesce(OLD.bytes, octet_length(OLD.message::text)) ELSE 0 END);
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER deskpilot_chat_message_added AFTER INSERT ON deskpilot_chat_messages
      FOR EACH ROW EXECUTE FUNCTION deskpilot_chat_message_written()`,
    `CREATE TRIGGER deskpilot_chat_message_replaced AFTER UPDATE ON deskpilot_chat_messages
      FOR EACH ROW WHEN (OLD.bytes IS DISTINCT FROM NEW.bytes OR NEW.bytes IS NULL)
      EXECUTE FUNCTION deskpilot_chat_message_written()`,
    // The user's update reads the conversations' (RETURNING): their rows are locked first.
    `CREATE FUNCTION deskpilot_chat_messages_removed() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    BEGIN
      WITH gone AS (
        SELECT session_id, sum(coalesce(bytes, octet_length(message::text))) AS bytes FROM removed GROUP BY session_id
      ), conversations AS (
        UPDATE deskpilot_chat_conversation_bytes total SET bytes = total.bytes - gone.bytes
        FROM gone WHERE total.session_id = gone.session_id RETURNING total.session_id, gone.bytes
      ), users AS (
        SELECT s.user_email, sum(conversations.bytes) AS bytes
        FROM conversations JOIN deskpilot_chat_sessions s ON s.id = conversations.session_id GROUP BY s.user_email
      )
      UPDATE deskpilot_chat_user_bytes total SET bytes = total.bytes - users.bytes
      FROM users WHERE total.user_email = users.user_email;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER deskpilot_chat_messages_removed AFTER DELETE ON deskpilot_chat_messages
      REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION deskpilot_chat_messages_removed()`,
    `CREATE FUNCTION deskpilot_chat_session_removed() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM deskpilot_chat_messages WHERE session_id = OLD.id;
      RETURN OLD;
    END $$`,
    `CREATE TRIGGER deskpilot_chat_session_removed BEFORE DELETE ON deskpilot_chat_sessions
      FOR EACH ROW EXECUTE FUNCTION deskpilot_chat_session_removed()`,
    // TRUNCATE fires no delete trigger: emptying the messages empties the totals.
    `CREATE FUNCTION deskpilot_chat_messages_truncated() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM deskpilot_chat_conversation_bytes;
      DELETE FROM deskpilot_chat_user_bytes;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER deskpilot_chat_messages_truncated AFTER TRUNCATE ON deskpilot_chat_messages
      FOR EACH STATEMENT EXECUTE FUNCTION deskpilot_chat_messages_truncated()`,
  ],
};

/** Every migration, in order. Append only: a released migration never changes. */
export const migrations: readonly Migration[] = [
  initialSchema,
  hotRenewals,
  messageBytes,
  conversations,
  approvalDecisions,
  messageBranches,
  messagePreviews,
  accountRecovery,
  passkeys,
  identityLinks,
  approvalStepUp,
  auditTrail,
  teams,
  sessionClients,
  rolePolicies,
  organizations,
  approvalStepUpProvider,
  runningTurns,
  chatByteTotals,
];
