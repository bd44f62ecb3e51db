-- Up Migration

-- Witnesses' cosignatures of transparency-log checkpoints (docs/verifiable-history.md,
-- "Witnesses"): per repo, tree size and witness key, the witness's signature line over the exact
-- checkpoint text the log signed for that size. Any signed-in reader of the repo may post one; it
-- is stored only after it verifies against the key it names and the text matches the checkpoint
-- the server computes for that size, so a row here is a valid cosignature by that key, whoever
-- holds it: readers decide which witness keys they trust. A witness cosigning the same size again
-- replaces its line (Ed25519 is deterministic: it is the same line).
CREATE TABLE tlog_cosignatures (
  repo_id      bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  size         bigint NOT NULL CHECK (size >= 0),
  witness_key  text NOT NULL CHECK (length(witness_key) <= 400),
  line         text NOT NULL CHECK (length(line) <= 600),
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (repo_id, size, witness_key)
);

-- Down Migration
DROP TABLE tlog_cosignatures;
