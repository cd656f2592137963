-- Deskpilot migration 15: role policies
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deskpilot_role_policies (
  project_key text PRIMARY KEY,
  roles jsonb NOT NULL,
  version bigint NOT NULL,
  updated_at bigint NOT NULL,
  updated_by text
);

INSERT INTO deskpilot_migrations (version, name) VALUES (15, 'role policies');
