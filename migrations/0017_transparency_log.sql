-- Up Migration

-- The transparency log (docs/verifiable-history.md): per repo, an append-only Merkle tree with
-- RFC 9162 hashing whose leaf i is the 32 bytes of the hash of the commit with sequence i + 1.
-- One row per complete subtree: (level, idx) covers leaves [idx * 2^level, (idx + 1) * 2^level).
-- A leaf appends its own row and one per subtree it completes (two rows per commit on average),
-- and any proof or root is a handful of these rows read by primary key: O(log n) reads.
-- Rows are never updated or deleted while the repo exists: purge removes commits and content,
-- never leaves, so proofs given before a purge still verify.
CREATE TABLE tlog_nodes (
  repo_id  bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  level    smallint NOT NULL CHECK (level BETWEEN 0 AND 62),
  idx      bigint NOT NULL CHECK (idx >= 0),
  hash     bytea NOT NULL CHECK (length(hash) = 32),
  PRIMARY KEY (repo_id, level, idx)
);

-- The right edge of the tree of size last_sequence: the hashes of its complete subtrees, largest
-- (leftmost) first, one per bit set in the size. A commit reads it with the sequence it bumps (the
-- row it locks anyway) and writes it back in its insert, so appending a leaf costs no extra read
-- while the repo row is locked; the root of the current tree is this array folded from the right.
ALTER TABLE repos ADD COLUMN tlog_frontier bytea[] NOT NULL DEFAULT '{}';

-- The log's signing key in LOCAL mode (SVC_LOG_KMS_KEY_VERSION unset): one Ed25519 key generated
-- at first use; instances that start at once race with ON CONFLICT DO NOTHING and read back the
-- winner. In the cloud the key lives in Cloud KMS and this table stays empty.
CREATE TABLE tlog_signing_keys (
  one          boolean PRIMARY KEY DEFAULT true CHECK (one),
  private_pem  text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- Builds a repo's log from its commits, level by level, and sets its frontier: existing repos
-- get their leaves here, and the bench builds its 1,000,000-commit repo's log with it. A sequence
-- whose commit a purge removed before this migration has lost its hash: its leaf is 32 zero bytes.
CREATE FUNCTION tlog_build(repo bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  size bigint;
  lvl integer := 0;
  made bigint;
BEGIN
  SELECT last_sequence INTO size FROM repos WHERE id = repo FOR UPDATE;
  DELETE FROM tlog_nodes WHERE repo_id = repo;
  INSERT INTO tlog_nodes (repo_id, level, idx, hash)
  SELECT repo, 0, s.seq - 1,
         sha256('\x00'::bytea || coalesce(decode(c.hash, 'hex'), decode(repeat('00', 32), 'hex')))
  FROM generate_series(1::bigint, size) AS s (seq)
  LEFT JOIN commits c ON c.repo_id = repo AND c.sequence = s.seq;
  LOOP
    INSERT INTO tlog_nodes (repo_id, level, idx, hash)
    SELECT repo, lvl + 1, l.idx / 2, sha256('\x01'::bytea || l.hash || r.hash)
    FROM tlog_nodes l
    JOIN tlog_nodes r ON r.repo_id = repo AND r.level = lvl AND r.idx = l.idx + 1
    WHERE l.repo_id = repo AND l.level = lvl AND l.idx % 2 = 0;
    GET DIAGNOSTICS made = ROW_COUNT;
    EXIT WHEN made = 0;
    lvl := lvl + 1;
  END LOOP;
  UPDATE repos SET tlog_frontier = ARRAY(
    SELECT n.hash FROM generate_series(62, 0, -1) AS k
    JOIN tlog_nodes n ON n.repo_id = repo AND n.level = k AND n.idx = (size >> k) - 1
    WHERE (size >> k) & 1 = 1
    ORDER BY k DESC)
  WHERE id = repo;
END $$;

SELECT tlog_build(id) FROM repos;

-- Down Migration
DROP FUNCTION tlog_build(bigint);
DROP TABLE tlog_signing_keys;
ALTER TABLE repos DROP COLUMN tlog_frontier;
DROP TABLE tlog_nodes;
