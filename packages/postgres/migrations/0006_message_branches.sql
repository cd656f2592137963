-- Deskpilot migration 6: message branches
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE deskpilot_chat_messages ADD COLUMN parent_id text;

ALTER TABLE deskpilot_chat_sessions ADD COLUMN active_message_id text;

INSERT INTO deskpilot_migrations (version, name) VALUES (6, 'message branches');
