import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { RepoAccess } from "../access/roles.ts";
import { MAIN } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import { fail } from "../errors.ts";
import { type ChangeStatus, statusOf } from "./changes.ts";
import { diffStructureBudget, type FileDiff, fileDiff, type StructureOf } from "./diff.ts";
import type { HistoryEntry } from "./history.ts";
import { type FileVersion, filesInView, resolveView, type View } from "./view.ts";

/** One side of a comparison as typed: a branch (at its head or at a sequence), or a bare sequence. */
export type Side = { branch: string; at?: number } | { sequence: number };

/** Most changed files a comparison shows (with their diffs); the count says how many there are. */
export const MAX_COMPARED_FILES = 300;
/** Most commits a comparison lists. */
const MAX_COMPARED_COMMITS = 250;

/**
 * `main`, `feature/x`, `42` or `feature/x@42`; null when it is none of these (the branch name is
 * checked where it is looked up). A bare number is the commit with that sequence, on its branch.
 */
export function parseSide(text: string): Side | null {
  const s = text.trim();
  if (/^\d{1,15}$/.test(s)) return { sequence: Number(s) };
  const m = /^([^@\s]+)(?:@(\d{1,15}))?$/.exec(s);
  if (!m?.[1]) return null;
  return m[2] === undefined ? { branch: m[1] } : { branch: m[1], at: Number(m[2]) };
}

/** A run of one branch's rows, sequences lo..hi inclusive. */
export interface Segment {
  branchId: number;
  lo: number;
  hi: number;
}

/** The rows a view reads: its branch's own from the epoch's start to `at`, then main's up to the base. */
export function segmentsOf(view: View): Segment[] {
  const own = { branchId: view.branch.id, lo: view.ownFrom, hi: view.at };
  return view.parentId === null ? [own] : [own, { branchId: view.parentId, lo: 0, hi: view.parentAt }];
}

/** The parts of `a` not in `b` (a view holds at most one segment per branch). */
export function segmentsMinus(a: Segment[], b: Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of a) {
    const cut = b.find((t) => t.branchId === s.branchId);
    if (!cut || cut.hi < s.lo || cut.lo > s.hi) out.push(s);
    else {
      if (s.lo < cut.lo) out.push({ branchId: s.branchId, lo: s.lo, hi: cut.lo - 1 });
      if (s.hi > cut.hi) out.push({ branchId: s.branchId, lo: cut.hi + 1, hi: s.hi });
    }
  }
  return out.filter((s) => s.lo <= s.hi);
}

const segmentArgs = (segments: Segment[]) => [
  segments.map((s) => s.branchId),
  segments.map((s) => s.lo),
  segments.map((s) => s.hi),
];

// The paths with a row in any of the segments: a range scan of file_changes_by_commit per segment.
const compare_paths_select = `
  SELECT DISTINCT f.path
  FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) AS s (branch_id, lo, hi)
  JOIN file_changes f ON f.repo_id = $1 AND f.sequence BETWEEN s.lo AND s.hi AND f.branch_id = s.branch_id
  ORDER BY f.path`;

// The commits in the segments, newest first, with how many there are in all.
const compare_commits_select = `
  SELECT c.sequence, b.name AS branch, c.author, c.message, c.created_at, count(*) OVER () AS total
  FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) AS s (branch_id, lo, hi)
  JOIN commits c ON c.repo_id = $1 AND c.branch_id = s.branch_id AND c.sequence BETWEEN s.lo AND s.hi
  JOIN branches b ON b.id = c.branch_id
  ORDER BY c.sequence DESC
  LIMIT $5`;

const commit_branch_select = `
  SELECT b.name FROM commits c JOIN branches b ON b.id = c.branch_id WHERE c.repo_id = $1 AND c.sequence = $2`;

/** The view a side names: BRANCH_NOT_FOUND, SEQUENCE_OUT_OF_RANGE or COMMIT_NOT_FOUND when there is none. */
async function viewOfSide(db: Queryable, access: RepoAccess, side: Side): Promise<View> {
  if ("branch" in side) return resolveView(db, access.repo.id, side.branch, side.at);
  if (side.sequence === 0) return resolveView(db, access.repo.id, MAIN, 0);
  const { rows } = await db.query<{ name: string }>(commit_branch_select, [access.repo.id, side.sequence]);
  const branch = rows[0]?.name;
  if (branch === undefined) fail("COMMIT_NOT_FOUND", `no commit ${side.sequence} in '${access.repo.name}'`);
  return resolveView(db, access.repo.id, branch, side.sequence);
}

async function commitsIn(db: Queryable, repoId: number, segments: Segment[]) {
  if (segments.length === 0) return { commits: [] as HistoryEntry[], total: 0 };
  const { rows } = await db.query<HistoryEntry & { total: number }>(compare_commits_select, [
    repoId,
    ...segmentArgs(segments),
    MAX_COMPARED_COMMITS,
  ]);
  return { commits: rows.map(({ total: _t, ...c }) => c), total: rows[0]?.total ?? 0 };
}

export interface ComparedFile extends FileDiff {
  path: string;
  status: ChangeStatus;
  binary: boolean;
}

/**
 * `to` against `from`: the files whose content differs (with a unified diff each, at most
 * MAX_COMPARED_FILES), and the commits `to` holds that `from` does not. When `from` also holds
 * commits `to` lacks, the two are not on one line of history (`diverged`) and both counts say so.
 */
export async function compareSides(ctx: AppContext, access: RepoAccess, q: { from: Side; to: Side }) {
  const [from, to] = [await viewOfSide(ctx.pool, access, q.from), await viewOfSide(ctx.pool, access, q.to)];
  const onlyTo = segmentsMinus(segmentsOf(to), segmentsOf(from));
  const onlyFrom = segmentsMinus(segmentsOf(from), segmentsOf(to));
  const touched = [...onlyTo, ...onlyFrom];
  const { rows } =
    touched.length === 0
      ? { rows: [] }
      : await ctx.pool.query<{ path: string }>(compare_paths_select, [
          access.repo.id,
          ...segmentArgs(touched),
        ]);
  const paths = rows.map((r) => r.path);
  const [before, after] = await Promise.all([
    filesInView(ctx.pool, from, paths),
    filesInView(ctx.pool, to, paths),
  ]);
  const changed = paths.filter((p) =>
    statusOf(before.get(p)?.content_sha256 ?? null, after.get(p)?.content_sha256 ?? null),
  );
  const files: ComparedFile[] = [];
  const structureOf = diffStructureBudget();
  for (const path of changed.slice(0, MAX_COMPARED_FILES)) {
    // Each diff runs synchronously; other requests get their turn between files.
    await yieldToEventLoop();
    files.push(
      await comparedFile(
        ctx,
        { repoId: access.repo.id, structureOf },
        path,
        before.get(path),
        after.get(path),
      ),
    );
  }
  const [ahead, behind] = await Promise.all([
    commitsIn(ctx.pool, access.repo.id, onlyTo),
    commitsIn(ctx.pool, access.repo.id, onlyFrom),
  ]);
  return {
    from: { branch: from.branch.name, at: from.at },
    to: { branch: to.branch.name, at: to.at },
    files,
    changedFiles: changed.length,
    commits: ahead.commits,
    commitCount: ahead.total,
    diverged: behind.total > 0,
    commitsOnlyInFrom: behind.total,
  };
}

async function comparedFile(
  ctx: AppContext,
  on: { repoId: number; structureOf: StructureOf },
  path: string,
  before: FileVersion | undefined,
  after: FileVersion | undefined,
): Promise<ComparedFile> {
  const mainSha = before?.content_sha256 ?? null;
  const branchSha = after?.content_sha256 ?? null;
  const status = statusOf(mainSha, branchSha) ?? "modified";
  const change = {
    path,
    status,
    branchSha,
    contentType: after?.content_type ?? null,
    branchBinary: after?.is_binary ?? false,
    mainSha,
    mainBinary: before?.is_binary ?? false,
  };
  return {
    path,
    status,
    binary: change.branchBinary || change.mainBinary,
    ...(await fileDiff(ctx, on.repoId, change, on.structureOf)),
  };
}
