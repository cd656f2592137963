-- Deskpilot migration 17: approval step-up provider
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE deskpilot_approvals ADD COLUMN step_up_provider jsonb;

INSERT INTO deskpilot_migrations (version, name) VALUES (17, 'approval step-up provider');
