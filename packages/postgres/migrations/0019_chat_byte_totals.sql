-- Deskpilot migration 19: chat byte totals
-- Generated from @deskpilot/postgres; run in order, each file in one transaction.

CREATE TABLE IF NOT EXISTS deskpilot_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

LOCK TABLE deskpilot_chat_messages IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE deskpilot_chat_conversation_bytes (
  session_id text PRIMARY KEY REFERENCES deskpilot_chat_sessions (id) ON DELETE CASCADE,
  bytes bigint NOT NULL
);

CREATE TABLE deskpilot_chat_user_bytes (
  user_email text PRIMARY KEY,
  bytes bigint NOT NULL
);

UPDATE deskpilot_chat_messages SET bytes = octet_length(message::text) WHERE bytes IS NULL;

INSERT INTO deskpilot_chat_conversation_bytes (session_id, bytes)
SELECT session_id, sum(bytes) FROM deskpilot_chat_messages GROUP BY session_id;

INSERT INTO deskpilot_chat_user_bytes (user_email, bytes)
SELECT s.user_email, sum(c.bytes) FROM deskpilot_chat_conversation_bytes c
JOIN deskpilot_chat_sessions s ON s.id = c.session_id GROUP BY s.user_email;

CREATE FUNCTION deskpilot_chat_count_bytes(conversation text, delta bigint) RETURNS void LANGUAGE sql
SET search_path FROM CURRENT AS $$
  WITH counted AS (
    INSERT INTO deskpilot_chat_conversation_bytes AS total (session_id, bytes) VALUES (conversation, delta)
    ON CONFLICT (session_id) DO UPDATE SET bytes = total.bytes + excluded.bytes
    RETURNING session_id
  )
  INSERT INTO deskpilot_chat_user_bytes AS total (user_email, bytes)
  SELECT s.user_email, delta FROM counted JOIN deskpilot_chat_sessions s ON s.id = counted.session_id
  ON CONFLICT (user_email) DO UPDATE SET bytes = total.bytes + excluded.bytes
$$;

CREATE FUNCTION deskpilot_chat_message_written() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM deskpilot_chat_count_bytes(NEW.session_id, coalesce(NEW.bytes, octet_length(NEW.message::text))
    - CASE WHEN TG_OP = 'UPDATE' THEN coalesce(OLD.bytes, octet_length(OLD.message::text)) ELSE 0 END);
  RETURN NULL;
END $$;

CREATE TRIGGER deskpilot_chat_message_added AFTER INSERT ON deskpilot_chat_messages
FOR EACH ROW EXECUTE FUNCTION deskpilot_chat_message_written();

CREATE TRIGGER deskpilot_chat_message_replaced AFTER UPDATE ON deskpilot_chat_messages
FOR EACH ROW WHEN (OLD.bytes IS DISTINCT FROM NEW.bytes OR NEW.bytes IS NULL)
EXECUTE FUNCTION deskpilot_chat_message_written();

CREATE FUNCTION deskpilot_chat_messages_removed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  WITH gone AS (
    SELECT session_id, sum(coalesce(bytes, octet_length(message::text))) AS bytes FROM removed GROUP BY session_id
  ), conversations AS (
    UPDATE deskpilot_chat_conversation_bytes total SET bytes = total.bytes - gone.bytes
    FROM gone WHERE total.session_id = gone.session_id RETURNING total.session_id, gone.bytes
  ), users AS (
    SELECT s.user_email, sum(conversations.bytes) AS bytes
    FROM conversations JOIN deskpilot_chat_sessions s ON s.id = conversations.session_id GROUP BY s.user_email
  )
  UPDATE deskpilot_chat_user_bytes total SET bytes = total.bytes - users.bytes
  FROM users WHERE total.user_email = users.user_email;
  RETURN NULL;
END $$;

CREATE TRIGGER deskpilot_chat_messages_removed AFTER DELETE ON deskpilot_chat_messages
REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION deskpilot_chat_messages_removed();

CREATE FUNCTION deskpilot_chat_session_removed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM deskpilot_chat_messages WHERE session_id = OLD.id;
  RETURN OLD;
END $$;

CREATE TRIGGER deskpilot_chat_session_removed BEFORE DELETE ON deskpilot_chat_sessions
FOR EACH ROW EXECUTE FUNCTION deskpilot_chat_session_removed();

CREATE FUNCTION deskpilot_chat_messages_truncated() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM deskpilot_chat_conversation_bytes;
  DELETE FROM deskpilot_chat_user_bytes;
  RETURN NULL;
END $$;

CREATE TRIGGER deskpilot_chat_messages_truncated AFTER TRUNCATE ON deskpilot_chat_messages
FOR EACH STATEMENT EXECUTE FUNCTION deskpilot_chat_messages_truncated();

INSERT INTO deskpilot_migrations (version, name) VALUES (19, 'chat byte totals');
