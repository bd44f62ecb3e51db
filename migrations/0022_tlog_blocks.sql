-- Up Migration

-- The transparency log stores less (docs/verifiable-history.md, "How it is stored"). A leaf
-- is its commit's own hash, read from the commit row; only a commit that a purge removes leaves a
-- level-0 row behind, written by the purge before it deletes the commit. Levels 1 to 3 are not
-- stored: a proof hashes the few leaves under such a node. The commit that completes a block of
-- 16 leaves stores the block's node (level 4) and each larger subtree it completes. So 15 commits
-- of 16 write nothing for the log, and the right edge the repo row carried is gone: it was a
-- second update of the row every commit already locks, and a checkpoint now reads its nodes.
ALTER TABLE repos DROP COLUMN tlog_frontier;
DELETE FROM tlog_nodes WHERE level BETWEEN 1 AND 3;
DELETE FROM tlog_nodes n USING commits c WHERE n.level = 0 AND c.repo_id = n.repo_id AND c.sequence = n.idx + 1;

-- Rebuilds a repo's stored nodes from its leaves: the commits' hashes, the leaves purge kept, and
-- 32 zero bytes for a commit a purge removed before 0017. Tests use it as a server rewriting its
-- history would, and the bench builds its 1,000,000-commit repo's log with it.
CREATE OR REPLACE FUNCTION tlog_build(repo bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  size bigint;
  lvl integer := 0;
  made bigint;
BEGIN
  SELECT last_sequence INTO size FROM repos WHERE id = repo FOR UPDATE;
  DELETE FROM tlog_nodes WHERE repo_id = repo AND level > 0;
  DELETE FROM tlog_nodes n USING commits c
  WHERE n.repo_id = repo AND n.level = 0 AND c.repo_id = repo AND c.sequence = n.idx + 1;
  -- Every leaf as a row while the levels are built; those of existing commits go again below.
  INSERT INTO tlog_nodes (repo_id, level, idx, hash)
  SELECT repo, 0, s.seq - 1,
         sha256('\x00'::bytea || coalesce(decode(c.hash, 'hex'), decode(repeat('00', 32), 'hex')))
  FROM generate_series(1::bigint, size) AS s (seq)
  LEFT JOIN commits c ON c.repo_id = repo AND c.sequence = s.seq
  ON CONFLICT (repo_id, level, idx) DO NOTHING;
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
  DELETE FROM tlog_nodes WHERE repo_id = repo AND level BETWEEN 1 AND 3;
  DELETE FROM tlog_nodes n USING commits c
  WHERE n.repo_id = repo AND n.level = 0 AND c.repo_id = repo AND c.sequence = n.idx + 1;
END $$;

-- Down Migration
-- Every level stored again and the right edge back on the repo row, keeping the leaves purge kept.
ALTER TABLE repos ADD COLUMN tlog_frontier bytea[] NOT NULL DEFAULT '{}';
CREATE OR REPLACE FUNCTION tlog_build(repo bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  size bigint;
  lvl integer := 0;
  made bigint;
BEGIN
  SELECT last_sequence INTO size FROM repos WHERE id = repo FOR UPDATE;
  DELETE FROM tlog_nodes WHERE repo_id = repo AND level > 0;
  INSERT INTO tlog_nodes (repo_id, level, idx, hash)
  SELECT repo, 0, s.seq - 1,
         sha256('\x00'::bytea || coalesce(decode(c.hash, 'hex'), decode(repeat('00', 32), 'hex')))
  FROM generate_series(1::bigint, size) AS s (seq)
  LEFT JOIN commits c ON c.repo_id = repo AND c.sequence = s.seq
  ON CONFLICT (repo_id, level, idx) DO NOTHING;
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
