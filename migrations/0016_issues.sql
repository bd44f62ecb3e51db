-- Up Migration

-- Issues (docs/issues.md). Issues and proposals share one sequence of numbers per repo (`#12` is
-- one thing, as on forges), so the counter of migration 0012 becomes the repo's item counter:
-- opening a proposal or an issue upserts, and so locks, the repo's row in the same transaction.
ALTER TABLE proposal_numbers RENAME TO item_numbers;
ALTER TABLE item_numbers RENAME CONSTRAINT proposal_numbers_pkey TO item_numbers_pkey;
ALTER TABLE item_numbers RENAME CONSTRAINT proposal_numbers_repo_id_fkey TO item_numbers_repo_id_fkey;
ALTER TABLE item_numbers RENAME CONSTRAINT proposal_numbers_last_number_check TO item_numbers_last_number_check;

CREATE TABLE issues (
  id            uuid PRIMARY KEY,
  repo_id       bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  number        bigint NOT NULL CHECK (number > 0),
  title         text NOT NULL,
  body          text NOT NULL DEFAULT '',
  author        text NOT NULL,
  state         text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
  -- Set while closed, cleared on reopening (as the origin system answers them).
  close_reason  text CHECK (close_reason IN ('completed', 'not_planned', 'duplicate')),
  closed_by     text,
  closed_at     timestamptz,
  labels        text[] NOT NULL DEFAULT '{}',
  assignees     text[] NOT NULL DEFAULT '{}',
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  UNIQUE (repo_id, number),
  CHECK ((state = 'closed') = (closed_at IS NOT NULL))
);
-- The list: a repo's issues by state, newest number first; label and assignee filters use GIN.
CREATE INDEX issues_repo_state_number ON issues (repo_id, state, number DESC);
CREATE INDEX issues_labels ON issues USING gin (labels);
CREATE INDEX issues_assignees ON issues USING gin (assignees);

CREATE TABLE issue_comments (
  id          uuid PRIMARY KEY,
  issue_id    uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
  body        text NOT NULL,
  author      text NOT NULL,
  created_at  timestamptz NOT NULL,
  edited_at   timestamptz
);
CREATE INDEX issue_comments_issue ON issue_comments (issue_id, created_at, id);

-- Down Migration
DROP TABLE issue_comments;
DROP TABLE issues;
ALTER TABLE item_numbers RENAME CONSTRAINT item_numbers_last_number_check TO proposal_numbers_last_number_check;
ALTER TABLE item_numbers RENAME CONSTRAINT item_numbers_repo_id_fkey TO proposal_numbers_repo_id_fkey;
ALTER TABLE item_numbers RENAME CONSTRAINT item_numbers_pkey TO proposal_numbers_pkey;
ALTER TABLE item_numbers RENAME TO proposal_numbers;
