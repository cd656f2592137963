/** One step of the SQLite schema; the database's `PRAGMA user_version` is the last one applied. */
export interface SqliteMigration {
  version: number;
  name: string;
  sql: string;
}

// The Postgres schema's tables and columns (see @deskpilot/postgres), in SQLite's types: STRICT tables,
// so a value of the wrong type is refused on write, JSON as text, epoch milliseconds as integers.
export const sqliteMigrations: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
      CREATE TABLE deskpilot_sessions (
        id TEXT PRIMARY KEY,
        secret_hash TEXT NOT NULL,
        user_id TEXT NOT NULL,
        project_key TEXT NOT NULL,
        client_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        idle_expires_at INTEGER NOT NULL,
        version INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX deskpilot_sessions_user_id ON deskpilot_sessions (user_id);
      CREATE INDEX deskpilot_sessions_expiry ON deskpilot_sessions (min(expires_at, idle_expires_at));

      CREATE TABLE deskpilot_users (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        password_hash TEXT NOT NULL
      ) STRICT;
      CREATE TABLE deskpilot_memberships (
        user_id TEXT NOT NULL REFERENCES deskpilot_users (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        project_key TEXT NOT NULL,
        client_id TEXT NOT NULL,
        role TEXT NOT NULL,
        PRIMARY KEY (user_id, position)
      ) STRICT;

      CREATE TABLE deskpilot_chat_sessions (
        id TEXT PRIMARY KEY,
        user_email TEXT NOT NULL,
        project_key TEXT NOT NULL,
        working_memory TEXT NOT NULL DEFAULT '{}',
        last_turn_status TEXT CHECK (last_turn_status IN ('complete', 'aborted', 'awaiting_approval', 'budget_exhausted', 'failed')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        version INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX deskpilot_chat_sessions_user_email ON deskpilot_chat_sessions (user_email);
      -- The rowid (position) keeps the order messages were first saved in; an upsert keeps it.
      CREATE TABLE deskpilot_chat_messages (
        position INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES deskpilot_chat_sessions (id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        message TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        UNIQUE (session_id, id)
      ) STRICT;
      CREATE INDEX deskpilot_chat_messages_order ON deskpilot_chat_messages (session_id, position);

      CREATE TABLE deskpilot_approvals (
        id TEXT PRIMARY KEY,
        chat_session_id TEXT NOT NULL,
        user_email TEXT NOT NULL,
        project_key TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        input TEXT NOT NULL,
        input_hash TEXT NOT NULL,
        capabilities TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'executing', 'done', 'denied')),
        outcome TEXT,
        reason TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX deskpilot_approvals_by_session ON deskpilot_approvals (chat_session_id, state, created_at);
      CREATE INDEX deskpilot_approvals_expires_at ON deskpilot_approvals (expires_at);
    `,
  },
  {
    version: 2,
    name: 'conversations: titles, archive, tombstones',
    // The list reads one owner's conversations in a project, newest activity first: one partial index
    // for the list and one for the archive, so a page is an index range scan either way.
    sql: `
      ALTER TABLE deskpilot_chat_sessions ADD COLUMN title TEXT;
      ALTER TABLE deskpilot_chat_sessions ADD COLUMN archived_at INTEGER;
      ALTER TABLE deskpilot_chat_sessions ADD COLUMN deleted_at INTEGER;
      CREATE INDEX deskpilot_chat_sessions_listed ON deskpilot_chat_sessions (user_email, project_key, updated_at DESC, id DESC)
        WHERE archived_at IS NULL AND deleted_at IS NULL;
      CREATE INDEX deskpilot_chat_sessions_archived ON deskpilot_chat_sessions (user_email, project_key, updated_at DESC, id DESC)
        WHERE archived_at IS NOT NULL AND deleted_at IS NULL;
      CREATE INDEX deskpilot_chat_sessions_retention ON deskpilot_chat_sessions (archived_at)
        WHERE archived_at IS NOT NULL AND deleted_at IS NULL;
    `,
  },
  {
    version: 3,
    name: 'approval decisions',
    sql: `
      ALTER TABLE deskpilot_approvals ADD COLUMN decided_by TEXT;
      ALTER TABLE deskpilot_approvals ADD COLUMN decided_at INTEGER;
      ALTER TABLE deskpilot_approvals ADD COLUMN decided_session TEXT;
    `,
  },
  {
    version: 4,
    name: 'message branches',
    // A message's parent: NULL for the message stored just before it (every row written before this
    // migration included, so nothing is rewritten), '' for a new first message, else the parent's id.
    // A conversation's active branch ends at active_message_id, or at its newest message when NULL.
    sql: `
      ALTER TABLE deskpilot_chat_messages ADD COLUMN parent_id TEXT;
      ALTER TABLE deskpilot_chat_sessions ADD COLUMN active_message_id TEXT;
    `,
  },
  {
    version: 5,
    name: 'message previews',
    // What the conversation list shows of each message (its text, 200 characters, '' without text),
    // so a list page never reads a whole message; rows written before it are read as before. SQLite
    // keeps a row's columns in order, and a new column comes after the message: reading it from the
    // row would walk the message's overflow pages. The index carries it, so the list reads the index
    // only — and the sizes and the parents too (also after the message), so a quota check sums the
    // index and a branch is followed in it, never reading the messages. It replaces the order index,
    // whose columns it starts with.
    sql: `
      ALTER TABLE deskpilot_chat_messages ADD COLUMN preview TEXT;
      CREATE INDEX deskpilot_chat_messages_previews ON deskpilot_chat_messages (session_id, position, preview, bytes, id, parent_id);
      DROP INDEX deskpilot_chat_messages_order;
    `,
  },
  {
    version: 6,
    name: 'account recovery and verification',
    // When a user proved they receive mail at their address (NULL: not yet). One-time links (password
    // reset, email verification) are kept as a digest of their token, the key: a leaked table opens no
    // account, and a link is found by its digest, never compared character by character. `purpose` is
    // checked by the code that reads it: a later one-time secret needs no migration.
    sql: `
      ALTER TABLE deskpilot_users ADD COLUMN email_verified_at INTEGER;
      CREATE TABLE deskpilot_account_tokens (
        token_hash TEXT PRIMARY KEY,
        purpose TEXT NOT NULL,
        user_id TEXT NOT NULL,
        email TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX deskpilot_account_tokens_user ON deskpilot_account_tokens (user_id, purpose);
      CREATE INDEX deskpilot_account_tokens_expiry ON deskpilot_account_tokens (expires_at);
    `,
  },
  {
    version: 7,
    name: 'passkeys',
    // Passkeys (WebAuthn credentials): the public key and the signature counter, never anything secret.
    // The rowid orders a user's passkeys as they were added.
    sql: `
      CREATE TABLE deskpilot_passkeys (
        position INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        public_key TEXT NOT NULL,
        counter INTEGER NOT NULL,
        transports TEXT NOT NULL,
        device_type TEXT NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
        backed_up INTEGER NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER
      ) STRICT;
      CREATE INDEX deskpilot_passkeys_user ON deskpilot_passkeys (user_id, position);
    `,
  },
  {
    version: 8,
    name: 'identity links',
    // Single sign-on: which person at which identity provider (issuer + subject) is which user. One user
    // per person, one person per user at each provider.
    sql: `
      CREATE TABLE deskpilot_identity_links (
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        user_id TEXT NOT NULL,
        linked_at INTEGER NOT NULL,
        PRIMARY KEY (issuer, subject),
        UNIQUE (issuer, user_id)
      ) STRICT;
      CREATE INDEX deskpilot_identity_links_user ON deskpilot_identity_links (user_id);
    `,
  },
  {
    version: 9,
    name: 'approval step-up',
    // The fresh user verification an approval was approved with: how, which passkey, when. Nullable:
    // approvals decided before, and those no policy asked a step-up for, have none.
    sql: `
      ALTER TABLE deskpilot_approvals ADD COLUMN step_up_method TEXT;
      ALTER TABLE deskpilot_approvals ADD COLUMN step_up_credential TEXT;
      ALTER TABLE deskpilot_approvals ADD COLUMN step_up_at INTEGER;
    `,
  },
  {
    version: 10,
    name: 'audit trail',
    // Append-only records, one hash chain per project, and each chain's head (its last record, and how
    // far retention pruned). `seq` counts from 1 per project.
    sql: `
      CREATE TABLE deskpilot_audit (
        project_key TEXT NOT NULL,
        seq INTEGER NOT NULL,
        at INTEGER NOT NULL,
        type TEXT NOT NULL,
        actor TEXT,
        session TEXT,
        subject TEXT,
        data TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (project_key, seq)
      ) STRICT;
      CREATE INDEX deskpilot_audit_at ON deskpilot_audit (project_key, at);
      CREATE TABLE deskpilot_audit_heads (
        project_key TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        hash TEXT NOT NULL,
        pruned_through INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 11,
    name: 'teams',
    // Invitations (by the digest of their token, never the token), and memberships found by project.
    sql: `
      CREATE TABLE deskpilot_invitations (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        project_key TEXT NOT NULL,
        client_id TEXT NOT NULL,
        role TEXT NOT NULL,
        email TEXT NOT NULL,
        invited_by TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX deskpilot_invitations_project ON deskpilot_invitations (project_key, created_at);
      CREATE INDEX deskpilot_invitations_expiry ON deskpilot_invitations (expires_at);
      CREATE INDEX deskpilot_memberships_project ON deskpilot_memberships (project_key, role);
    `,
  },
  {
    version: 12,
    name: 'session clients',
    // Where each session was signed in from, for the people who review their sessions. Nullable.
    sql: `
      ALTER TABLE deskpilot_sessions ADD COLUMN client_address TEXT;
      ALTER TABLE deskpilot_sessions ADD COLUMN user_agent TEXT;
    `,
  },
  {
    version: 13,
    name: 'role policies',
    // Each project's role policy as its admins last set it; a project with no row has the built-in one.
    sql: `
      CREATE TABLE deskpilot_role_policies (
        project_key TEXT PRIMARY KEY,
        roles TEXT NOT NULL,
        version INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        updated_by TEXT
      ) STRICT;
    `,
  },
  {
    version: 14,
    name: 'organizations',
    // Organisations above projects: each project in at most one, and the admins of each.
    sql: `
      CREATE TABLE deskpilot_organization_projects (
        project_key TEXT PRIMARY KEY,
        organization TEXT NOT NULL
      ) STRICT;
      CREATE INDEX deskpilot_organization_projects_organization ON deskpilot_organization_projects (organization);
      CREATE TABLE deskpilot_organization_admins (
        organization TEXT NOT NULL,
        user_id TEXT NOT NULL,
        PRIMARY KEY (user_id, organization)
      ) STRICT;
    `,
  },
  {
    version: 15,
    name: 'approval step-up provider',
    // A step-up at an identity provider, told apart from a sign-in here: which provider, its auth_time
    // and the ID token's sid and jti, as JSON. Nullable: every other step-up has none.
    sql: `ALTER TABLE deskpilot_approvals ADD COLUMN step_up_provider TEXT;`,
  },
  {
    version: 16,
    name: 'running turns',
    // The turn each conversation runs now, while the handler marks them: what a process that starts
    // after a crash records as aborted.
    sql: `
      CREATE TABLE deskpilot_running_turns (
        session_id TEXT PRIMARY KEY REFERENCES deskpilot_chat_sessions (id) ON DELETE CASCADE,
        turn_id TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 17,
    name: 'chat byte totals',
    // Running byte totals for the storage quotas, per conversation and per user, kept by triggers in
    // the transaction of every write to a message: a quota check reads one row, never the user's whole
    // history. A conversation row deleted outright takes its messages first, so their sizes come off.
    sql: `
      CREATE TABLE deskpilot_chat_conversation_bytes (
        session_id TEXT PRIMARY KEY REFERENCES deskpilot_chat_sessions (id) ON DELETE CASCADE,
        bytes INTEGER NOT NULL
      ) STRICT;
      CREATE TABLE deskpilot_chat_user_bytes (
        user_email TEXT PRIMARY KEY,
        bytes INTEGER NOT NULL
      ) STRICT;
      INSERT INTO deskpilot_chat_conversation_bytes (session_id, bytes)
        SELECT session_id, sum(bytes) FROM deskpilot_chat_messages GROUP BY session_id;
      INSERT INTO deskpilot_chat_user_bytes (user_email, bytes)
        SELECT s.user_email, sum(c.bytes) FROM deskpilot_chat_conversation_bytes c
        JOIN deskpilot_chat_sessions s ON s.id = c.session_id GROUP BY s.user_email;
      CREATE TRIGGER deskpilot_chat_message_added AFTER INSERT ON deskpilot_chat_messages BEGIN
        INSERT INTO deskpilot_chat_conversation_bytes (session_id, bytes) VALUES (NEW.session_id, NEW.bytes)
          ON CONFLICT (session_id) DO UPDATE SET bytes = bytes + excluded.bytes;
        INSERT INTO deskpilot_chat_user_bytes (user_email, bytes)
          SELECT user_email, NEW.bytes FROM deskpilot_chat_sessions WHERE id = NEW.session_id
          ON CONFLICT (user_email) DO UPDATE SET bytes = bytes + excluded.bytes;
      END;
      CREATE TRIGGER deskpilot_chat_message_replaced AFTER UPDATE OF bytes ON deskpilot_chat_messages
      WHEN OLD.bytes IS NOT NEW.bytes BEGIN
        UPDATE deskpilot_chat_conversation_bytes SET bytes = bytes + NEW.bytes - OLD.bytes WHERE session_id = NEW.session_id;
        UPDATE deskpilot_chat_user_bytes SET bytes = bytes + NEW.bytes - OLD.bytes
          WHERE user_email = (SELECT user_email FROM deskpilot_chat_sessions WHERE id = NEW.session_id);
      END;
      CREATE TRIGGER deskpilot_chat_message_removed AFTER DELETE ON deskpilot_chat_messages BEGIN
        UPDATE deskpilot_chat_conversation_bytes SET bytes = bytes - OLD.bytes WHERE session_id = OLD.session_id;
        UPDATE deskpilot_chat_user_bytes SET bytes = bytes - OLD.bytes
          WHERE user_email = (SELECT user_email FROM deskpilot_chat_sessions WHERE id = OLD.session_id);
      END;
      CREATE TRIGGER deskpilot_chat_session_removed BEFORE DELETE ON deskpilot_chat_sessions BEGIN
        DELETE FROM deskpilot_chat_messages WHERE session_id = OLD.id;
      END;
    `,
  },
];
