-- Deskpilot migration 14: session clients
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE deskpilot_sessions ADD COLUMN client_address text, ADD COLUMN user_agent text;

INSERT INTO deskpilot_migrations (version, name) VALUES (14, 'session clients');
