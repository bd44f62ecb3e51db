-- Up Migration

-- Auto-merge (docs/auto-merge.md): who asked for a branch to merge by itself once its policies
-- pass, and when. Both set or both null. Kept on the branch row, so enabling, disabling and the
-- merge itself serialise on the branch's row lock; a merged branch keeps them as a record.
ALTER TABLE branches
  ADD COLUMN auto_merge_by text,
  ADD COLUMN auto_merge_at timestamptz,
  ADD CONSTRAINT branches_auto_merge_both CHECK ((auto_merge_by IS NULL) = (auto_merge_at IS NULL));

-- The auto-merge relay finds a repo's enabled branches when main moves.
CREATE INDEX branches_auto_merge ON branches (repo_id) WHERE auto_merge_by IS NOT NULL AND status = 'active';

-- Down Migration
DROP INDEX branches_auto_merge;
ALTER TABLE branches DROP CONSTRAINT branches_auto_merge_both, DROP COLUMN auto_merge_at, DROP COLUMN auto_merge_by;
