-- Deskpilot migration 5: approval decisions
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE deskpilot_approvals ADD COLUMN decided_by text, ADD COLUMN decided_at bigint, ADD COLUMN decided_session text;

INSERT INTO deskpilot_migrations (version, name) VALUES (5, 'approval decisions');
