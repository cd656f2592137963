-- Deskpilot migration 9: passkeys
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deskpilot_passkeys (
  id text PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  user_id text NOT NULL,
  public_key text NOT NULL,
  counter bigint NOT NULL,
  transports jsonb NOT NULL,
  device_type text NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
  backed_up boolean NOT NULL,
  name text NOT NULL,
  created_at bigint NOT NULL,
  last_used_at bigint
);

CREATE INDEX deskpilot_passkeys_user ON deskpilot_passkeys (user_id, position);

INSERT INTO deskpilot_migrations (version, name) VALUES (9, 'passkeys');
