-- Deskpilot migration 12: audit trail
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deskpilot_audit (
  project_key text NOT NULL,
  seq bigint NOT NULL,
  at bigint NOT NULL,
  type text NOT NULL,
  actor text,
  session text,
  subject text,
  data jsonb NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL,
  PRIMARY KEY (project_key, seq)
);

CREATE INDEX deskpilot_audit_at ON deskpilot_audit (project_key, at);

CREATE TABLE deskpilot_audit_heads (
  project_key text PRIMARY KEY,
  seq bigint NOT NULL,
  hash text NOT NULL,
  pruned_through bigint NOT NULL
);

INSERT INTO deskpilot_migrations (version, name) VALUES (12, 'audit trail');
