-- Up Migration

-- Human-sized proposal numbers (#1, #2, … per repo), beside the UUID the API keeps. The counter
-- row of a repo is upserted, and so locked, in the transaction that opens a proposal: two
-- concurrent openings in one repo take their numbers one after the other, and a refused opening
-- rolls its number back, so numbers have no gaps and never repeat.
CREATE TABLE proposal_numbers (
  repo_id      bigint PRIMARY KEY REFERENCES repos (id) ON DELETE CASCADE,
  last_number  bigint NOT NULL CHECK (last_number > 0)
);

ALTER TABLE proposals ADD COLUMN number bigint;
-- Existing proposals are numbered in the order they were opened.
UPDATE proposals p SET number = n.number
FROM (SELECT id, row_number() OVER (PARTITION BY repo_id ORDER BY created_at, id) AS number FROM proposals) n
WHERE n.id = p.id;
INSERT INTO proposal_numbers (repo_id, last_number)
SELECT repo_id, max(number) FROM proposals GROUP BY repo_id;
ALTER TABLE proposals ALTER COLUMN number SET NOT NULL;
ALTER TABLE proposals ADD CONSTRAINT proposals_repo_id_number_key UNIQUE (repo_id, number);

-- A comment may answer another comment on the same branch and path (checked by the service).
-- A reply outlives a deleted parent and is then shown as a comment of its own.
ALTER TABLE comments ADD COLUMN reply_to uuid REFERENCES comments (id) ON DELETE SET NULL;
CREATE INDEX comments_reply_to ON comments (reply_to) WHERE reply_to IS NOT NULL;

-- Down Migration
DROP INDEX comments_reply_to;
ALTER TABLE comments DROP COLUMN reply_to;
ALTER TABLE proposals DROP COLUMN number;
DROP TABLE proposal_numbers;
