-- Deskpilot migration 8: account recovery and verification
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE deskpilot_users ADD COLUMN email_verified_at bigint;

CREATE TABLE deskpilot_account_tokens (
  token_hash text PRIMARY KEY,
  purpose text NOT NULL,
  user_id text NOT NULL,
  email text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);

CREATE INDEX deskpilot_account_tokens_user ON deskpilot_account_tokens (user_id, purpose);

CREATE INDEX deskpilot_account_tokens_expiry ON deskpilot_account_tokens (expires_at);

INSERT INTO deskpilot_migrations (version, name) VALUES (8, 'account recovery and verification');
