-- Up Migration

-- Manual links from an issue to a commit or a proposal (docs/issues.md), the origin system's
-- `POST …/-/issues/{n}/refs`. References written as `#n` in text are computed when read and have
-- no row; these are the ones a person ties by hand. A link goes with what it points at: its commit
-- (purged with an abandoned branch), its proposal or its issue.
CREATE TABLE issue_refs (
  id               uuid PRIMARY KEY,
  repo_id          bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
  issue_id         uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
  commit_sequence  bigint,
  proposal_id      uuid REFERENCES proposals (id) ON DELETE CASCADE,
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL,
  FOREIGN KEY (repo_id, commit_sequence) REFERENCES commits (repo_id, sequence) ON DELETE CASCADE,
  -- Exactly one target.
  CHECK ((commit_sequence IS NULL) <> (proposal_id IS NULL))
);
-- One link per issue and target; these also serve the other direction (a commit's or a
-- proposal's issues) and the cascades from commits and proposals.
CREATE UNIQUE INDEX issue_refs_commit ON issue_refs (repo_id, commit_sequence, issue_id)
  WHERE commit_sequence IS NOT NULL;
CREATE UNIQUE INDEX issue_refs_proposal ON issue_refs (proposal_id, issue_id) WHERE proposal_id IS NOT NULL;
CREATE INDEX issue_refs_issue ON issue_refs (issue_id, created_at);

-- Down Migration
DROP TABLE issue_refs;
