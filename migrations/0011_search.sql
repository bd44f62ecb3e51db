-- Up Migration

-- Search of file contents (docs/search.md). The text of each content is indexed once per repo,
-- by its (repo_id, sha256) like `contents`, whatever paths, branches and sequences use it; a
-- query finds the matching contents by trigram and only then keeps those that are in the tree
-- being read (file_changes, by its content index). pg_trgm is a trusted extension (PostgreSQL
-- 13+): the schema's owner may create it without superuser, here, in the embedded PostgreSQL
-- and in Cloud SQL alike.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Text only (not binary, no NUL byte) and at most 262,144 bytes (shared/search/index.ts): what
-- is bigger is not found by search, and says so in the docs.
CREATE TABLE search_texts (
  repo_id  bigint NOT NULL,
  sha256   bytea NOT NULL,
  body     text NOT NULL,
  PRIMARY KEY (repo_id, sha256),
  -- Purge deletes contents; their indexed text goes with them.
  FOREIGN KEY (repo_id, sha256) REFERENCES contents (repo_id, sha256) ON DELETE CASCADE
);
-- `body ~* '***=term'` (the term as a literal) uses this index for a term with a run of three
-- letters or digits.
CREATE INDEX search_texts_trgm ON search_texts USING gin (body gin_trgm_ops);

-- The contents of a repo whose text matches `pattern` (a regular expression, case-insensitive),
-- at most `cap` of them. Through the trigram index only: the planner prices a regular expression
-- like any operator and, with statistics, prefers reading the whole table once it is small (10,000
-- texts: a seq scan of 53 ms for a term in one file, against 1.3 ms through the index), and
-- without statistics walks the primary key's repo_id the same way (`repo_id + 0` prevents that).
-- A function with its own setting is never inlined, so the setting holds for this query alone.
CREATE FUNCTION search_hits(p_repo bigint, pattern text, cap int) RETURNS TABLE (sha256 bytea)
LANGUAGE sql STABLE SET enable_seqscan = off AS $$
  SELECT t.sha256 FROM search_texts t WHERE t.repo_id + 0 = p_repo AND t.body ~* pattern LIMIT cap
$$;

-- Content committed before this migration: the text kept in its row (bodies in the blob store,
-- above SVC_BLOB_THRESHOLD_BYTES, are above the size cap with the default threshold). A body is
-- text when some commit recorded it as not binary, which means it is valid UTF-8 (isBinary).
INSERT INTO search_texts (repo_id, sha256, body)
SELECT c.repo_id, c.sha256, convert_from(c.data, 'UTF8')
FROM contents c
WHERE c.data IS NOT NULL
  AND c.size <= 262144
  AND position('\x00'::bytea IN c.data) = 0
  AND EXISTS (
    SELECT 1 FROM file_changes f
    WHERE f.repo_id = c.repo_id AND f.content_sha256 = c.sha256 AND NOT f.is_binary
  );

-- Down Migration
DROP FUNCTION search_hits;
DROP TABLE search_texts;
