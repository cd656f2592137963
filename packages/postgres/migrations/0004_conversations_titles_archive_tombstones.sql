-- Deskpilot migration 4: conversations: titles, archive, tombstones
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE deskpilot_chat_sessions ADD COLUMN title text, ADD COLUMN archived_at bigint, ADD COLUMN deleted_at bigint;

CREATE INDEX deskpilot_chat_sessions_listed ON deskpilot_chat_sessions (user_email, project_key, updated_at DESC, id DESC)
WHERE archived_at IS NULL AND deleted_at IS NULL;

CREATE INDEX deskpilot_chat_sessions_archived ON deskpilot_chat_sessions (user_email, project_key, updated_at DESC, id DESC)
WHERE archived_at IS NOT NULL AND deleted_at IS NULL;

CREATE INDEX deskpilot_chat_sessions_retention ON deskpilot_chat_sessions (archived_at)
WHERE archived_at IS NOT NULL AND deleted_at IS NULL;

INSERT INTO deskpilot_migrations (version, name) VALUES (4, 'conversations: titles, archive, tombstones');
