-- Deskpilot migration 16: organizations
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deskpilot_organization_projects (
  project_key text PRIMARY KEY,
  organization text NOT NULL
);

CREATE INDEX deskpilot_organization_projects_organization ON deskpilot_organization_projects (organization);

CREATE TABLE deskpilot_organization_admins (
  organization text NOT NULL,
  user_id text NOT NULL,
  PRIMARY KEY (user_id, organization)
);

INSERT INTO deskpilot_migrations (version, name) VALUES (16, 'organizations');
