-- Deskpilot migration 1: initial schema
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deskpilot_sessions (
  id text PRIMARY KEY,
  secret_hash text NOT NULL,
  user_id text NOT NULL,
  project_key text NOT NULL,
  client_id text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  idle_expires_at bigint NOT NULL,
  version integer NOT NULL
);

CREATE INDEX deskpilot_sessions_user_id ON deskpilot_sessions (user_id);

CREATE INDEX deskpilot_sessions_expiry ON deskpilot_sessions ((least(expires_at, idle_expires_at)));

CREATE TABLE deskpilot_users (
  id text PRIMARY KEY,
  email text NOT NULL UNIQUE,
  name text NOT NULL,
  password_hash text NOT NULL
);

CREATE TABLE deskpilot_memberships (
  user_id text NOT NULL REFERENCES deskpilot_users (id) ON DELETE CASCADE,
  position integer NOT NULL,
  project_key text NOT NULL,
  client_id text NOT NULL,
  role text NOT NULL,
  PRIMARY KEY (user_id, position)
);

CREATE TABLE deskpilot_chat_sessions (
  id text PRIMARY KEY,
  user_email text NOT NULL,
  project_key text NOT NULL,
  working_memory jsonb NOT NULL DEFAULT '{}',
  last_turn_status text CHECK (last_turn_status IN ('complete', 'aborted', 'awaiting_approval', 'budget_exhausted', 'failed')),
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  version integer NOT NULL
);

CREATE TABLE deskpilot_chat_messages (
  session_id text NOT NULL REFERENCES deskpilot_chat_sessions (id) ON DELETE CASCADE,
  id text NOT NULL,
  position bigint GENERATED ALWAYS AS IDENTITY,
  message jsonb NOT NULL,
  PRIMARY KEY (session_id, id)
);

CREATE INDEX deskpilot_chat_messages_order ON deskpilot_chat_messages (session_id, position);

CREATE TABLE deskpilot_approvals (
  id text PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  chat_session_id text NOT NULL,
  user_email text NOT NULL,
  project_key text NOT NULL,
  tool_name text NOT NULL,
  tool_call_id text NOT NULL,
  input jsonb NOT NULL,
  input_hash text NOT NULL,
  capabilities jsonb NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'executing', 'done', 'denied')),
  outcome jsonb,
  reason text,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);

CREATE INDEX deskpilot_approvals_by_session ON deskpilot_approvals (chat_session_id, state, created_at, position);

CREATE INDEX deskpilot_approvals_expires_at ON deskpilot_approvals (expires_at);

INSERT INTO deskpilot_migrations (version, name) VALUES (1, 'initial schema');
