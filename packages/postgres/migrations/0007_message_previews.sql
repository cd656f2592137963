-- Deskpilot migration 7: message previews
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE deskpilot_chat_messages ADD COLUMN preview text;

INSERT INTO deskpilot_migrations (version, name) VALUES (7, 'message previews');
