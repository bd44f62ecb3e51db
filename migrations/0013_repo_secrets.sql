-- Up Migration

-- Repo secrets for CI (docs/secrets.md): one row per (repo, name), sealed by envelope encryption.
-- The value is encrypted with AES-256-GCM under a data key made for this row alone; the data key
-- is stored only wrapped, by Cloud KMS when deployed or by the local key in development
-- (`key_ref` names which). Nothing here decrypts without that key: a dump of this table, a
-- backup or a replica yields no value. The value itself is never stored in any other column.
CREATE TABLE repo_secrets (
  id           uuid PRIMARY KEY,
  repo_id      bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  name         text COLLATE "C" NOT NULL CHECK (name ~ '^[A-Z_][A-Z0-9_]{0,127}$'),
  description  text NOT NULL DEFAULT '',
  -- The value's size before encryption (its ciphertext is as long): shown, and capped at 64 KiB.
  size_bytes   integer NOT NULL CHECK (size_bytes BETWEEN 1 AND 65536),
  ciphertext   bytea NOT NULL,
  -- AES-GCM's 12-byte nonce and 16-byte tag of `ciphertext`.
  nonce        bytea NOT NULL CHECK (octet_length(nonce) = 12),
  tag          bytea NOT NULL CHECK (octet_length(tag) = 16),
  -- The data key, wrapped; and which key wrapped it: `local:<name>` or a Cloud KMS key name.
  wrapped_key  bytea NOT NULL,
  key_ref      text NOT NULL,
  created_by   text NOT NULL,
  created_at   timestamptz NOT NULL,
  set_by       text NOT NULL,
  set_at       timestamptz NOT NULL,
  UNIQUE (repo_id, name)
);

-- Down Migration
DROP TABLE repo_secrets;
