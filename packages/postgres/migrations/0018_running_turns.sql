-- Deskpilot migration 18: running turns
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deskpilot_running_turns (
  session_id text PRIMARY KEY REFERENCES deskpilot_chat_sessions (id) ON DELETE CASCADE,
  turn_id text NOT NULL
);

INSERT INTO deskpilot_migrations (version, name) VALUES (18, 'running turns');
