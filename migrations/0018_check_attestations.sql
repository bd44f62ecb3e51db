-- Up Migration

-- Check runs as signed attestations (docs/verifiable-history.md): each final verdict a CI job
-- reports with its job token is also kept as an in-toto Statement in a DSSE envelope signed by
-- the log's key, written in the check run's own transaction. One per (branch, sequence, check
-- name), as check runs: a later job's report at the same place replaces it. A report by a person
-- (or the scheduler) never writes here, so a person can change a check's status but cannot make
-- an attestation: a merge policy that reads attestations sees only what a job said.
CREATE TABLE check_attestations (
  repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  branch_id   bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  sequence    bigint NOT NULL CHECK (sequence >= 1),
  check_name  text COLLATE "C" NOT NULL,
  job_id      uuid NOT NULL,
  envelope    jsonb NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (branch_id, sequence, check_name)
);

-- The SHA-256 of each stored CI log, so a job's attestation can name the log it reported with
-- (its predicate's log_digest). Logs stored before this migration have none.
ALTER TABLE ci_logs ADD COLUMN sha256 bytea CHECK (length(sha256) = 32);

-- Down Migration
ALTER TABLE ci_logs DROP COLUMN sha256;
DROP TABLE check_attestations;
