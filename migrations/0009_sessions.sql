-- Up Migration

-- Browser sessions (docs/sessions.md): one row per sign-in through /auth/login. The cookie holds
-- a random 32-byte id; the table keeps only its SHA-256, so a copy of the table signs nobody in.
-- A session ends when it is revoked (sign-out), idle too long (`last_seen_at`) or past
-- `expires_at`; an ended session is refused even when its cookie is replayed.
CREATE TABLE sessions (
  id_sha256     bytea PRIMARY KEY CHECK (octet_length(id_sha256) = 32),
  -- The signed-in identity, in lower case as every identity Quire keeps.
  identity      text COLLATE "C" NOT NULL,
  created_at    timestamptz NOT NULL,
  -- Updated at most every few minutes by the requests of the session: the idle limit.
  last_seen_at  timestamptz NOT NULL,
  -- The absolute limit, fixed at sign-in.
  expires_at    timestamptz NOT NULL,
  revoked_at    timestamptz,
  CHECK (expires_at > created_at)
);
-- Sign-in deletes rows long past their expiry.
CREATE INDEX sessions_expires_at ON sessions (expires_at);
-- Ending every session of one identity (an admin's revocation).
CREATE INDEX sessions_identity ON sessions (identity) WHERE revoked_at IS NULL;

-- Down Migration
DROP TABLE sessions;
