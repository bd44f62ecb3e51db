-- Up Migration

-- The read path (issue 22, docs/benchmarks.md "Where a tree page's time goes").
--
-- Each path's newest version at or below a sequence, in one probe: the primary key orders a
-- path's versions oldest first, so finding the newest took a second descent (and a heap fetch)
-- per path. This index orders them newest first and carries what a tree page shows, so the first
-- entry at or below `at` after a path is both the next path and its version, read from the index
-- alone. A file's history reads it too (newest first, index-only).
CREATE INDEX file_changes_newest ON file_changes (branch_id, path, sequence DESC)
  INCLUDE (content_sha256, content_type, is_binary);

-- tree_page as before (same arguments, same rows), two ways:
-- - one layer (main, no parent): one recursive statement walks from path to path through
--   file_changes_newest; PL/pgSQL ran two statements per path, and their per-statement cost was
--   most of the page's (measured: 0.7 ms a page instead of 2 to 3 ms);
-- - two layers (a branch over main): the same loop as before, one probe per path and layer.
-- `sequence + 0 >= own_from` keeps that bound a filter, as in migration 0001.
CREATE OR REPLACE FUNCTION tree_page(p_branch bigint, own_from bigint, at bigint, p_parent bigint, parent_at bigint, after_path text, page_size int)
RETURNS TABLE (path text, content_sha256 bytea, content_type text, is_binary boolean)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  -- "C" like the column: least() and the `after` cursor must agree with the index's byte order.
  own_path text COLLATE "C";
  own_sha bytea;
  own_type text;
  own_binary boolean;
  parent_path text COLLATE "C";
  parent_sha bytea;
  parent_type text;
  parent_binary boolean;
  current text COLLATE "C";
  emitted int := 0;
BEGIN
  IF p_parent IS NULL THEN
    RETURN QUERY
      WITH RECURSIVE walk AS (
        (SELECT f.path, f.content_sha256, f.content_type, f.is_binary FROM file_changes f
         WHERE f.branch_id = p_branch AND f.path > after_path COLLATE "C" AND f.sequence <= at
           AND f.sequence + 0 >= own_from
         ORDER BY f.path, f.sequence DESC LIMIT 1)
        UNION ALL
        SELECT n.path, n.content_sha256, n.content_type, n.is_binary FROM walk w CROSS JOIN LATERAL (
          SELECT f.path, f.content_sha256, f.content_type, f.is_binary FROM file_changes f
          WHERE f.branch_id = p_branch AND f.path > w.path AND f.sequence <= at AND f.sequence + 0 >= own_from
          ORDER BY f.path, f.sequence DESC LIMIT 1) n
      )
      SELECT w.path, w.content_sha256, w.content_type, w.is_binary FROM walk w
      WHERE w.content_sha256 IS NOT NULL LIMIT page_size;
    RETURN;
  END IF;
  SELECT f.path, f.content_sha256, f.content_type, f.is_binary INTO own_path, own_sha, own_type, own_binary
  FROM file_changes f WHERE f.branch_id = p_branch AND f.path > after_path AND f.sequence <= at AND f.sequence + 0 >= own_from
  ORDER BY f.path, f.sequence DESC LIMIT 1;
  SELECT f.path, f.content_sha256, f.content_type, f.is_binary INTO parent_path, parent_sha, parent_type, parent_binary
  FROM file_changes f WHERE f.branch_id = p_parent AND f.path > after_path AND f.sequence <= parent_at
  ORDER BY f.path, f.sequence DESC LIMIT 1;
  WHILE emitted < page_size LOOP
    current := least(own_path, parent_path);
    EXIT WHEN current IS NULL;
    IF current = own_path THEN
      content_sha256 := own_sha; content_type := own_type; is_binary := own_binary;
      SELECT f.path, f.content_sha256, f.content_type, f.is_binary INTO own_path, own_sha, own_type, own_binary
      FROM file_changes f WHERE f.branch_id = p_branch AND f.path > current AND f.sequence <= at AND f.sequence + 0 >= own_from
      ORDER BY f.path, f.sequence DESC LIMIT 1;
    ELSE
      content_sha256 := parent_sha; content_type := parent_type; is_binary := parent_binary;
    END IF;
    IF current = parent_path THEN
      SELECT f.path, f.content_sha256, f.content_type, f.is_binary INTO parent_path, parent_sha, parent_type, parent_binary
      FROM file_changes f WHERE f.branch_id = p_parent AND f.path > current AND f.sequence <= parent_at
      ORDER BY f.path, f.sequence DESC LIMIT 1;
    END IF;
    IF content_sha256 IS NOT NULL THEN
      path := current;
      emitted := emitted + 1;
      RETURN NEXT;
    END IF;
  END LOOP;
END
$$;

-- Down Migration
CREATE OR REPLACE FUNCTION tree_page(p_branch bigint, own_from bigint, at bigint, p_parent bigint, parent_at bigint, after_path text, page_size int)
RETURNS TABLE (path text, content_sha256 bytea, content_type text, is_binary boolean)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  -- "C" like the column: least() and the `after` cursor must agree with the index's byte order,
  -- whatever the database's default collation is.
  next_own text COLLATE "C";
  next_parent text COLLATE "C";
  current text COLLATE "C";
  emitted int := 0;
BEGIN
  SELECT f.path INTO next_own FROM file_changes f
  WHERE f.branch_id = p_branch AND f.path > after_path AND f.sequence <= at AND f.sequence + 0 >= own_from ORDER BY f.path LIMIT 1;
  SELECT f.path INTO next_parent FROM file_changes f
  WHERE f.branch_id = p_parent AND f.path > after_path AND f.sequence <= parent_at ORDER BY f.path LIMIT 1;
  WHILE emitted < page_size LOOP
    current := least(next_own, next_parent);
    EXIT WHEN current IS NULL;
    IF current = next_own THEN
      SELECT f.content_sha256, f.content_type, f.is_binary INTO content_sha256, content_type, is_binary
      FROM file_changes f WHERE f.branch_id = p_branch AND f.path = current AND f.sequence <= at AND f.sequence + 0 >= own_from
      ORDER BY f.sequence DESC LIMIT 1;
      SELECT f.path INTO next_own FROM file_changes f
      WHERE f.branch_id = p_branch AND f.path > current AND f.sequence <= at AND f.sequence + 0 >= own_from ORDER BY f.path LIMIT 1;
    ELSE
      SELECT f.content_sha256, f.content_type, f.is_binary INTO content_sha256, content_type, is_binary
      FROM file_changes f WHERE f.branch_id = p_parent AND f.path = current AND f.sequence <= parent_at
      ORDER BY f.sequence DESC LIMIT 1;
    END IF;
    IF current = next_parent THEN
      SELECT f.path INTO next_parent FROM file_changes f
      WHERE f.branch_id = p_parent AND f.path > current AND f.sequence <= parent_at ORDER BY f.path LIMIT 1;
    END IF;
    IF content_sha256 IS NOT NULL THEN
      path := current;
      emitted := emitted + 1;
      RETURN NEXT;
    END IF;
  END LOOP;
END
$$;
DROP INDEX file_changes_newest;
