-- Up Migration

-- Which file changes use a content row: purge's orphan check, and the foreign key's own checks
-- when content rows are deleted.
CREATE INDEX file_changes_by_content ON file_changes (repo_id, content_sha256);

ALTER TABLE branches ADD COLUMN merged_at timestamptz, ADD COLUMN merged_by text, ADD COLUMN merge_sequence bigint;

CREATE TABLE reviews (
  id          uuid PRIMARY KEY,
  repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  branch_id   bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  sequence    bigint NOT NULL,
  status      text NOT NULL CHECK (status IN ('approved', 'rejected')),
  body        text NOT NULL,
  reviewer    text COLLATE "C" NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reviews_by_branch ON reviews (branch_id, sequence, created_at);

-- One row per (branch, sequence, check name): a later report replaces the earlier one.
CREATE TABLE check_runs (
  id          uuid PRIMARY KEY,
  repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  branch_id   bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  sequence    bigint NOT NULL,
  check_name  text COLLATE "C" NOT NULL,
  status      text NOT NULL CHECK (status IN ('pending', 'passed', 'failed')),
  log_url     text,
  reporter    text COLLATE "C" NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (branch_id, sequence, check_name)
);

CREATE TABLE comments (
  id          uuid PRIMARY KEY,
  repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  branch_id   bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  path        text COLLATE "C" NOT NULL,
  sequence    bigint NOT NULL,
  body        text NOT NULL,
  author      text COLLATE "C" NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX comments_by_branch ON comments (branch_id, path, created_at);

CREATE TABLE proposals (
  id           uuid PRIMARY KEY,
  repo_id      bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  branch_id    bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  base_branch  text COLLATE "C" NOT NULL,
  title        text NOT NULL,
  description  text NOT NULL DEFAULT '',
  author       text COLLATE "C" NOT NULL,
  state        text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed', 'merged')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
-- At most one open proposal per branch, enforced by the database itself.
CREATE UNIQUE INDEX proposals_one_open_per_branch ON proposals (branch_id) WHERE state = 'open';
CREATE INDEX proposals_by_repo ON proposals (repo_id, state, created_at);

CREATE TABLE releases (
  repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  name        text COLLATE "C" NOT NULL,
  sequence    bigint NOT NULL,
  notes       text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now(),
  created_by  text COLLATE "C" NOT NULL,
  PRIMARY KEY (repo_id, name)
);
CREATE INDEX releases_by_sequence ON releases (repo_id, sequence);

-- Compiled Rego, shared by every instance: one row per policy source hash, so each policy
-- version is compiled once. A source that does not compile keeps its compiler message.
CREATE TABLE policy_modules (
  source_sha256  bytea PRIMARY KEY,
  wasm           bytea,
  entrypoints    text[] NOT NULL DEFAULT '{}',
  error          text,
  compiled_at    timestamptz NOT NULL DEFAULT now(),
  CHECK ((wasm IS NULL) <> (error IS NULL))
);

-- Server-held secrets that every instance must share (the archive URL signing key when none is
-- configured). Created once, never shown.
CREATE TABLE server_secrets (
  name        text PRIMARY KEY,
  secret      bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE server_secrets, policy_modules, releases, proposals, comments, check_runs, reviews;
ALTER TABLE branches DROP COLUMN merged_at, DROP COLUMN merged_by, DROP COLUMN merge_sequence;
