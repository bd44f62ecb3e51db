-- Up Migration

-- Browser sign-ins in flight (docs/sessions.md): one row per /auth/login, keyed by the SHA-256 of
-- its `state`. The callback deletes the row in the transaction that starts the session, and
-- refuses a callback whose row is gone, so a captured callback URL with its login cookie starts
-- at most one session even at a provider that honours a code twice. The signed login cookie
-- still carries the nonce, the PKCE verifier and where to return; this row only makes it single-use.
CREATE TABLE login_states (
  state_sha256  bytea PRIMARY KEY CHECK (octet_length(state_sha256) = 32),
  -- Ten minutes after /auth/login; expired rows are deleted at the next /auth/login.
  expires_at    timestamptz NOT NULL
);
CREATE INDEX login_states_expires_at ON login_states (expires_at);

-- Down Migration
DROP TABLE login_states;
