-- Deskpilot migration 13: teams
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deskpilot_invitations (
  id text PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  project_key text NOT NULL,
  client_id text NOT NULL,
  role text NOT NULL,
  email text NOT NULL,
  invited_by text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);

CREATE INDEX deskpilot_invitations_project ON deskpilot_invitations (project_key, created_at);

CREATE INDEX deskpilot_invitations_expiry ON deskpilot_invitations (expires_at);

CREATE INDEX deskpilot_memberships_project ON deskpilot_memberships (project_key, role);

INSERT INTO deskpilot_migrations (version, name) VALUES (13, 'teams');
