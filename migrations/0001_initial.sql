-- Up Migration

-- Orgs own repos. Names are validated in shared/names.ts; the database keeps them unique.
-- Names use the "C" collation so every list is in byte order, whatever the server's locale.
CREATE TABLE orgs (
  name        text COLLATE "C" PRIMARY KEY,
  created_at  timestamptz NOT NULL DEFAULT now(),
  created_by  text NOT NULL
);

-- Names differing only in case would be confusing twins: one of them is enough.
CREATE UNIQUE INDEX orgs_name_unique_ci ON orgs (lower(name));

CREATE TABLE org_members (
  org         text COLLATE "C" NOT NULL REFERENCES orgs (name) ON DELETE CASCADE,
  identity    text COLLATE "C" NOT NULL,
  role        text NOT NULL CHECK (role IN ('owner', 'member')),
  added_at    timestamptz NOT NULL DEFAULT now(),
  added_by    text NOT NULL,
  PRIMARY KEY (org, identity)
);
CREATE INDEX org_members_by_identity ON org_members (identity);

-- The token itself is shown once; only its SHA-256 is kept.
CREATE TABLE org_invites (
  id            uuid PRIMARY KEY,
  org           text COLLATE "C" NOT NULL REFERENCES orgs (name) ON DELETE CASCADE,
  email         text NOT NULL,
  role          text NOT NULL CHECK (role IN ('owner', 'member')),
  token_sha256  bytea NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  created_by    text NOT NULL,
  expires_at    timestamptz NOT NULL,
  accepted_at   timestamptz,
  accepted_by   text,
  revoked_at    timestamptz,
  revoked_by    text
);
CREATE INDEX org_invites_by_org ON org_invites (org, created_at);

-- last_sequence is the repo's commit counter. It is bumped as the last step of a commit, while the
-- branch row is already locked, so sequences are gap-free and in commit order on every branch.
CREATE TABLE repos (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name           text COLLATE "C" NOT NULL UNIQUE,
  owner          text COLLATE "C" NOT NULL REFERENCES orgs (name),
  created_at     timestamptz NOT NULL DEFAULT now(),
  created_by     text NOT NULL,
  last_sequence  bigint NOT NULL DEFAULT 0
);
CREATE INDEX repos_by_owner ON repos (owner, name);
CREATE UNIQUE INDEX repos_name_unique_ci ON repos (lower(name));

CREATE TABLE repo_roles (
  repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  identity    text COLLATE "C" NOT NULL,
  role        text NOT NULL CHECK (role IN ('reader', 'writer', 'maintainer', 'admin')),
  granted_at  timestamptz NOT NULL DEFAULT now(),
  granted_by  text NOT NULL,
  PRIMARY KEY (repo_id, identity)
);
CREATE INDEX repo_roles_by_identity ON repo_roles (identity);

-- A branch name stays taken while the branch exists (merged and abandoned included), so that a read
-- at (branch, at=N) means the same thing forever.
CREATE TABLE branches (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  repo_id        bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  name           text COLLATE "C" NOT NULL,
  status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'merged', 'abandoned')),
  draft          boolean NOT NULL DEFAULT false,
  base_sequence  bigint NOT NULL,
  head_sequence  bigint NOT NULL,
  head_hash      text NOT NULL DEFAULT repeat('0', 64),
  created_at     timestamptz NOT NULL DEFAULT now(),
  created_by     text NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (repo_id, name)
);
CREATE INDEX branches_by_status ON branches (repo_id, status, name);

-- A branch's base over time. A read of the branch at N uses the epoch with the greatest from_at
-- at or below N: the branch's own rows from own_from up to N, laid over main up to
-- least(base_sequence, N). Creating a branch opens epoch (from_at 0, own_from 0); a rebase onto
-- main's head H opens (from_at H, own_from H + 1), so reads at sequences before the rebase
-- answer exactly as they did.
CREATE TABLE branch_epochs (
  branch_id      bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  from_at        bigint NOT NULL,
  base_sequence  bigint NOT NULL,
  own_from       bigint NOT NULL,
  PRIMARY KEY (branch_id, from_at)
);

-- Content-addressed file bodies, stored once per repo. Small bodies live inline; bodies above the
-- blob threshold live in the blob store under blob_key.
CREATE TABLE contents (
  repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  sha256      bytea NOT NULL,
  size        bigint NOT NULL,
  data        bytea,
  blob_key    text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (repo_id, sha256),
  CHECK ((data IS NULL) <> (blob_key IS NULL))
);

CREATE TABLE commits (
  repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  sequence    bigint NOT NULL,
  branch_id   bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  message     text NOT NULL,
  author      text NOT NULL,
  created_at  timestamptz NOT NULL,
  prev_hash   text NOT NULL,
  hash        text NOT NULL,
  PRIMARY KEY (repo_id, sequence)
);
CREATE INDEX commits_by_branch ON commits (branch_id, sequence);

-- One row per (branch, path, sequence) change: the whole history of every tree. The tree of a
-- branch at N is, per path, the newest row at or below N. Paths use the "C" collation so that
-- ordering (and the `after` cursor) is plain byte order, whatever the server's locale.
CREATE TABLE file_changes (
  branch_id       bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  path            text COLLATE "C" NOT NULL,
  sequence        bigint NOT NULL,
  repo_id         bigint NOT NULL,
  content_sha256  bytea,
  content_type    text,
  is_binary       boolean NOT NULL DEFAULT false,
  PRIMARY KEY (branch_id, path, sequence),
  FOREIGN KEY (repo_id, content_sha256) REFERENCES contents (repo_id, sha256)
);
-- A commit's changes, by (repo, sequence). Deliberately not (branch_id, sequence): with that index
-- a planner without statistics (a fresh or fast-growing table) walks the tree through it and sorts
-- every row of the branch, instead of probing the primary key; this one cannot serve those probes.
CREATE INDEX file_changes_by_commit ON file_changes (repo_id, sequence);

-- The event log: every mutation's CloudEvent, written in the mutation's transaction.
CREATE TABLE events (
  position  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id        uuid NOT NULL UNIQUE,
  type      text NOT NULL,
  source    text NOT NULL,
  repo      text,
  time      timestamptz NOT NULL,
  data      jsonb NOT NULL
);
CREATE INDEX events_by_repo ON events (repo, position);

-- A page of the tree of a branch at `at` (its own rows from `own_from`), laid over its parent (main)
-- at `parent_at`. This is a
-- skip scan: each step jumps to the next changed path through the (branch_id, path, sequence)
-- index and resolves it with one more probe, so a page costs about limit x log(rows) however long
-- the history is. Deleted paths are skipped. With no parent, pass NULL for p_parent. The queries
-- are written inline (not as helper functions) so PL/pgSQL caches their plans. `sequence + 0 >=
-- own_from` keeps the lower bound out of the index condition: as a second bound on the last key
-- column it made every probe cost twice as much (measured: 3.5 ms a page, 1.6 ms without).
CREATE FUNCTION tree_page(p_branch bigint, own_from bigint, at bigint, p_parent bigint, parent_at bigint, after_path text, page_size int)
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

-- Down Migration
DROP FUNCTION tree_page;
DROP TABLE events, file_changes, commits, contents, branch_epochs, branches, repo_roles, repos, org_invites, org_members, orgs;
