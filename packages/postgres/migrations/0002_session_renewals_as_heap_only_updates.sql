-- Deskpilot migration 2: session renewals as heap-only updates
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

DROP INDEX deskpilot_sessions_expiry;

ALTER TABLE deskpilot_sessions SET (fillfactor = 85);

INSERT INTO deskpilot_migrations (version, name) VALUES (2, 'session renewals as heap-only updates');
