import type pg from "pg";
import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { firstRowOf, prepared, type Queryable } from "../db/pool.ts";
import { type Tx, withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";

export const MAIN = "main";
export type BranchStatus = "active" | "merged" | "abandoned";

export interface BranchRow {
  id: number;
  name: string;
  head_sequence: number;
  base_sequence: number;
  status: BranchStatus;
  draft: boolean;
  head_hash: string;
  created_by: string;
  created_at: Date;
  /** Who enabled auto-merge and when (docs/auto-merge.md); both null while it is off. */
  auto_merge_by: string | null;
  auto_merge_at: Date | null;
}

/**
 * The wire shape of a branch: the row without its internal id and chain head. `auto_merge` is the
 * origin system's flag (its clients read a boolean); who enabled it and when are beside it.
 */
export type BranchRecord = Omit<BranchRow, "id" | "head_hash"> & { auto_merge: boolean };

export const toBranchRecord = ({ id: _id, head_hash: _hash, ...record }: BranchRow): BranchRecord => ({
  ...record,
  auto_merge: record.auto_merge_by !== null,
});

export const branch_columns =
  "id, name, head_sequence, base_sequence, status, draft, head_hash, created_by, created_at, auto_merge_by, auto_merge_at";
const branch_select_by_name_text = `SELECT ${branch_columns} FROM branches WHERE repo_id = $1 AND name = $2`;
const branch_select_by_name = {
  none: prepared<BranchRow>("branch_select_by_name", branch_select_by_name_text),
  share: prepared<BranchRow>("branch_select_by_name_for_share", `${branch_select_by_name_text} FOR SHARE`),
  update: prepared<BranchRow>("branch_select_by_name_for_update", `${branch_select_by_name_text} FOR UPDATE`),
};
const branch_select_list = `
  SELECT ${branch_columns} FROM branches
  WHERE repo_id = $1 AND status = $2 AND (draft = $3 OR $4::boolean)
  ORDER BY name`;
// A new branch with its first epoch: its own rows from the start, over main at its base.
const branch_insert = `
  WITH branch AS (
    INSERT INTO branches (repo_id, name, draft, base_sequence, head_sequence, created_by)
    VALUES ($1, $2, $3, $4, $4, $5)
    ON CONFLICT (repo_id, name) DO NOTHING
    RETURNING ${branch_columns}),
  epoch AS (
    INSERT INTO branch_epochs (branch_id, from_at, base_sequence, own_from)
    SELECT id, 0, base_sequence, 0 FROM branch)
  SELECT * FROM branch`;
const branch_update_draft = `UPDATE branches SET draft = false, updated_at = now() WHERE id = $1 RETURNING ${branch_columns}`;

/** A branch by name, or BRANCH_NOT_FOUND. */
export function requireBranch(db: Queryable, repoId: number, name: string): Promise<BranchRow>;
/** `lock` takes the row FOR UPDATE (or FOR SHARE) until the transaction ends, so it needs one. */
export function requireBranch(
  tx: Tx,
  repoId: number,
  name: string,
  lock: "update" | "share",
): Promise<BranchRow>;
export async function requireBranch(
  db: Queryable,
  repoId: number,
  name: string,
  lock?: "update" | "share",
): Promise<BranchRow> {
  const branch = await firstRowOf(db, branch_select_by_name[lock ?? "none"]([repoId, name]));
  if (!branch) fail("BRANCH_NOT_FOUND", `branch '${name}' not found`);
  return branch;
}

export function requireActive(branch: BranchRow): void {
  if (branch.status !== "active") fail("BRANCH_NOT_ACTIVE", `branch '${branch.name}' is ${branch.status}`);
}

export interface BranchFilter {
  status: BranchStatus;
  /** Only drafts. */
  draft: boolean;
  /** Drafts as well as ready branches. */
  includeDraft: boolean;
}

export async function listBranches(
  db: Queryable,
  access: RepoAccess,
  filter: BranchFilter,
): Promise<BranchRecord[]> {
  const { rows } = await db.query(branch_select_list, [
    access.repo.id,
    filter.status,
    filter.draft,
    filter.includeDraft && !filter.draft,
  ]);
  return rows.map(toBranchRecord);
}

/**
 * Creates a branch rooted at the current head of `main`. `main` is read FOR SHARE, so a commit to
 * `main` cannot move its head between reading it and recording it as this branch's base.
 */
export async function createBranch(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  input: { name: string; draft: boolean },
): Promise<BranchRecord> {
  return withTx(pool, async (tx) => {
    const main = await requireBranch(tx, access.repo.id, MAIN, "share");
    const { rows } = await tx.query(branch_insert, [
      access.repo.id,
      input.name,
      input.draft,
      main.head_sequence,
      actor.identity,
    ]);
    if (!rows[0]) fail("BRANCH_EXISTS", `branch '${input.name}' already exists in '${access.repo.name}'`);
    await recordEvent(
      tx,
      "com.svc.branch.created",
      {
        repo: access.repo.name,
        branch: input.name,
        base_sequence: main.head_sequence,
        created_by: actor.identity,
      },
      { repo: access.repo.name },
    );
    return toBranchRecord(rows[0]);
  });
}

export async function getBranch(db: Queryable, access: RepoAccess, name: string): Promise<BranchRecord> {
  return toBranchRecord(await requireBranch(db, access.repo.id, name));
}

/** How a merged branch was merged, as the merge recorded it on the branch row. */
export interface BranchMerge {
  /** The head of main after the merge: the merge commit (main's head if nothing changed). */
  merge_sequence: number;
  merged_by: string;
  merged_at: Date;
  /** The head that was merged: its checks and reviews are the ones the merge was judged by. */
  head_sequence: number;
}

const branch_merge_select = `
  SELECT merge_sequence, merged_by, merged_at, head_sequence FROM branches
  WHERE repo_id = $1 AND name = $2 AND status = 'merged'`;

/** The merge of a merged branch, or null while it is active or once abandoned. */
export async function branchMerge(
  db: Queryable,
  access: RepoAccess,
  name: string,
): Promise<BranchMerge | null> {
  const { rows } = await db.query<BranchMerge>(branch_merge_select, [access.repo.id, name]);
  return rows[0] ?? null;
}

/** Promotes a draft branch to ready. Making a branch a draft again is not supported. */
export async function promoteBranch(
  pool: pg.Pool,
  access: RepoAccess,
  name: string,
  draft: boolean,
): Promise<BranchRecord> {
  if (draft)
    fail("VALIDATION_FAILED", 'body.draft: only promoting a draft to ready ({"draft": false}) is supported');
  return withTx(pool, async (tx) => {
    const branch = await requireBranch(tx, access.repo.id, name, "update");
    requireActive(branch);
    const { rows } = await tx.query(branch_update_draft, [branch.id]);
    return toBranchRecord(rows[0]);
  });
}
