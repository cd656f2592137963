-- Deskpilot migration 10: identity links
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deskpilot_identity_links (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id text NOT NULL,
  linked_at bigint NOT NULL,
  PRIMARY KEY (issuer, subject),
  UNIQUE (issuer, user_id)
);

CREATE INDEX deskpilot_identity_links_user ON deskpilot_identity_links (user_id);

INSERT INTO deskpilot_migrations (version, name) VALUES (10, 'identity links');
