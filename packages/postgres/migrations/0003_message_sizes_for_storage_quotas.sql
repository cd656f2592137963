-- Deskpilot migration 3: message sizes for storage quotas
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE deskpilot_chat_messages ADD COLUMN bytes integer;

CREATE INDEX deskpilot_chat_sessions_user_email ON deskpilot_chat_sessions (user_email);

INSERT INTO deskpilot_migrations (version, name) VALUES (3, 'message sizes for storage quotas');
