import type { PrefetchedBranch, RepoAccess } from "../access/roles.ts";
import { type BranchRow, MAIN, requireBranch } from "../branches/branches.ts";
import type { Queryable } from "../db/pool.ts";
import { fail } from "../errors.ts";

/**
 * What a read at (branch, at) sees: the branch's own changes from `ownFrom` up to `at`, laid over
 * `main` up to `parentAt` — the base of the branch's epoch at `at` (see `branch_epochs`), or
 * `at` itself when that is lower. `main` has no parent. A view is immutable: every row it reads
 * was committed before `at` was the head, and a rebase opens a new epoch instead of rewriting one.
 */
export interface View {
  branch: BranchRow;
  at: number;
  ownFrom: number;
  parentId: number | null;
  parentAt: number;
}

const epoch_select_at = `
  SELECT base_sequence, own_from FROM branch_epochs
  WHERE branch_id = $1 AND from_at <= $2 ORDER BY from_at DESC LIMIT 1`;

/**
 * The view of a branch row at `at` (default: its head), refusing an `at` beyond the head. `known`
 * is what the access statement already read (main's id, the epoch at the head): the epoch at the
 * head is the epoch of every `at` from its `from_at` on, so those need no query.
 */
export async function viewOf(
  db: Queryable,
  repoId: number,
  branch: BranchRow,
  at?: number,
  known?: PrefetchedBranch,
): Promise<View> {
  const seq = at ?? branch.head_sequence;
  if (seq > branch.head_sequence) {
    fail(
      "SEQUENCE_OUT_OF_RANGE",
      `query.at: ${seq} is beyond the head of '${branch.name}' (${branch.head_sequence})`,
    );
  }
  if (branch.name === MAIN) return { branch, at: seq, ownFrom: 0, parentId: null, parentAt: 0 };
  const epochAtHead = known?.epoch;
  if (known?.mainId && epochAtHead && epochAtHead.from_at <= seq)
    return {
      branch,
      at: seq,
      ownFrom: epochAtHead.own_from,
      parentId: known.mainId,
      parentAt: Math.min(epochAtHead.base_sequence, seq),
    };
  const main = await requireBranch(db, repoId, MAIN);
  const { rows } = await db.query<{ base_sequence: number; own_from: number }>(epoch_select_at, [
    branch.id,
    seq,
  ]);
  // Every branch has an epoch from 0 on (created with the branch).
  const epoch = rows[0];
  if (!epoch) throw new Error(`branch ${branch.id} has no epoch at ${seq}`);
  return {
    branch,
    at: seq,
    ownFrom: epoch.own_from,
    parentId: main.id,
    parentAt: Math.min(epoch.base_sequence, seq),
  };
}

/**
 * The arguments of the SQL function tree_page for a page of `view` after path `after`:
 * `tree_page($1, $2, $3, $4, $5, $6, $7)`.
 */
export function treePageArgs(view: View, after: string, limit: number): unknown[] {
  return [view.branch.id, view.ownFrom, view.at, view.parentId, view.parentAt, after, limit];
}

/** The view of the branch named `branchName` at `at` (default: its head). */
export async function resolveView(
  db: Queryable,
  repoId: number,
  branchName: string,
  at: number | undefined,
): Promise<View> {
  return viewOf(db, repoId, await requireBranch(db, repoId, branchName), at);
}

/**
 * The view of the branch named `branchName` at `at` for a caller whose access statement read that
 * branch already (`RepoAccess.branch`): no query at all for main, nor for most reads of a branch.
 */
export async function resolveAccessView(
  db: Queryable,
  access: RepoAccess,
  branchName: string,
  at: number | undefined,
): Promise<View> {
  const known = access.branch;
  if (known?.name !== branchName) return resolveView(db, access.repo.id, branchName, at);
  if (!known.row) fail("BRANCH_NOT_FOUND", `branch '${branchName}' not found`);
  return viewOf(db, access.repo.id, known.row, at, known);
}

/** Where `newestChangeInView` finds the view's parameters: placeholders such as `$1`. */
export interface ViewPlaceholders {
  branch: string;
  at: string;
  parent: string;
  parentAt: string;
  ownFrom: string;
}

/**
 * The newest change of the path `path` (an SQL expression) in a view: the branch's own, else the
 * parent's. Used as a LATERAL subquery over a list of paths (as `v`); each side is one index probe.
 */
export const newestChangeInView = ($: ViewPlaceholders, path = "p.path") => `
  LATERAL (
    (SELECT f.content_sha256, f.content_type, f.is_binary, 0 AS layer FROM file_changes f
     WHERE f.branch_id = ${$.branch} AND f.path = ${path} AND f.sequence BETWEEN ${$.ownFrom} AND ${$.at}
     ORDER BY f.sequence DESC LIMIT 1)
    UNION ALL
    (SELECT f.content_sha256, f.content_type, f.is_binary, 1 AS layer FROM file_changes f
     WHERE f.branch_id = ${$.parent} AND f.path = ${path} AND f.sequence <= ${$.parentAt}
     ORDER BY f.sequence DESC LIMIT 1)
    ORDER BY layer LIMIT 1) v`;

/**
 * `newestChangeInView` of `p.path` with the parameters `viewParams` gives: $1 the branch, $2 `at`,
 * $3 the parent, $4 `parentAt`, $6 `ownFrom`.
 */
export const newest_change_in_view = newestChangeInView({
  branch: "$1",
  at: "$2",
  parent: "$3",
  parentAt: "$4",
  ownFrom: "$6",
});
const files_in_view_select = `
  SELECT p.path, v.content_sha256, v.content_type, v.is_binary
  FROM unnest($5::text[]) AS p (path) CROSS JOIN ${newest_change_in_view}
  WHERE v.content_sha256 IS NOT NULL`;

/**
 * The view's parameters in the positions `newest_change_in_view` reads, with `fifth` as $5 (the
 * statement's own first parameter; further ones follow from $7).
 */
export const viewParams = (view: View, fifth: unknown): unknown[] => [
  view.branch.id,
  view.at,
  view.parentId,
  view.parentAt,
  fifth,
  view.ownFrom,
];

export interface FileVersion {
  content_sha256: Buffer;
  content_type: string;
  is_binary: boolean;
}

/** The versions of those `paths` that are present in a view (never written and deleted ones are left out). */
export async function filesInView(
  db: Queryable,
  view: View,
  paths: string[],
): Promise<Map<string, FileVersion>> {
  const { rows } = await db.query<FileVersion & { path: string }>(
    files_in_view_select,
    viewParams(view, paths),
  );
  return new Map(rows.map((r) => [r.path, r]));
}

/** The version of `path` in a view, or null when the path is absent (never written, or deleted). */
export async function fileInView(db: Queryable, view: View, path: string): Promise<FileVersion | null> {
  return (await filesInView(db, view, [path])).get(path) ?? null;
}
