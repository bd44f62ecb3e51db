import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { createTwoFilesPatch } from "diff";
import type { RepoAccess } from "../access/roles.ts";
import { MAIN, requireBranch } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import { type DocumentDiff, structureBudget } from "../documents/changes.ts";
import { fail } from "../errors.ts";
import { resolveConflicts } from "../merge/resolve.ts";
import { conflictsWithMain, type NetChange, netChanges } from "./changes.ts";
import { loadBodyUpTo } from "./content.ts";
import { resolveView } from "./view.ts";

/** Text files larger than this get `diff: ""` rather than a unified diff. */
export const MAX_TEXT_DIFF_BYTES = 1_048_576;
/**
 * Changes whose diff needs more than this many inserted plus deleted lines get `diff: ""`. The
 * diff (Myers) costs about the square of that count: two 1 MiB texts that differ on every line
 * took minutes of one core, all of it blocking the event loop. Bounded, it takes well under a
 * second, and an edit that large is not one anybody reads as a unified diff.
 */
const MAX_DIFF_EDITS = 1000;

/** A side's text: null when the side does not exist, undefined when it is above MAX_TEXT_DIFF_BYTES. */
async function textOf(
  ctx: AppContext,
  repoId: number,
  sha: Buffer | null,
): Promise<string | null | undefined> {
  if (sha === null) return null;
  const data = await loadBodyUpTo(ctx.pool, ctx.blobs, repoId, sha, MAX_TEXT_DIFF_BYTES);
  return data === null ? undefined : data.toString("utf8");
}

/**
 * Characters of JSON and YAML text one diff or comparison reads for its structured changes (about
 * 1.5 s of CPU for YAML at worst); files past it get none (docs/api.md, "Structured changes").
 */
export const MAX_STRUCTURED_CHARS_PER_DIFF = 524_288;

/** A structured diff under one answer's allowance (structureBudget). */
export type StructureOf = ReturnType<typeof structureBudget>;

/** A fresh allowance for one diff or comparison. */
export const diffStructureBudget = (): StructureOf => structureBudget(MAX_STRUCTURED_CHARS_PER_DIFF);

/** What the diff says of one changed file besides its path and status. */
export interface FileDiff {
  /** A unified diff; "" for binary content, files above MAX_TEXT_DIFF_BYTES and too many edits. */
  diff: string;
  /** The changed places, for a JSON or YAML file whose existing sides parse. */
  structure?: DocumentDiff;
}

/**
 * A text change as a unified diff, and for JSON and YAML its changed places (docs/api.md,
 * "Structured changes"), which a change too large for a unified diff still has.
 */
export async function fileDiff(
  ctx: AppContext,
  repoId: number,
  c: NetChange,
  structureOf: StructureOf,
): Promise<FileDiff> {
  if (c.branchBinary || (c.mainSha && c.mainBinary)) return { diff: "" };
  const [before, after] = await Promise.all([
    textOf(ctx, repoId, c.mainSha),
    textOf(ctx, repoId, c.branchSha),
  ]);
  if (before === undefined || after === undefined) return { diff: "" };
  const patch = createTwoFilesPatch(`a/${c.path}`, `b/${c.path}`, before ?? "", after ?? "", "", "", {
    context: 3,
    maxEditLength: MAX_DIFF_EDITS,
  });
  const structure = structureOf(c.path, before, after);
  return structure ? { diff: patch ?? "", structure } : { diff: patch ?? "" };
}

/** A unified diff of each of a branch's net changes (see diffBranch). */
async function fileDiffs(ctx: AppContext, access: RepoAccess, net: NetChange[]) {
  const changes = [];
  const structureOf = diffStructureBudget();
  for (const c of net) {
    // Each diff runs synchronously; other requests get their turn between files.
    await yieldToEventLoop();
    const binary = c.branchBinary || (c.mainSha !== null && c.mainBinary);
    changes.push({
      path: c.path,
      status: c.status,
      binary,
      ...(await fileDiff(ctx, access.repo.id, c, structureOf)),
    });
  }
  return changes;
}

/**
 * The files changed on a branch relative to its base on `main` (a path changed and changed back
 * is not listed), with a unified diff for text files (and the changed places of JSON and YAML
 * files), and the conflicts: the paths changed on both `main` and the branch since the base that
 * do not merge by content, exactly as a merge would find them (docs/merge.md), so the diff never
 * shows a conflict the merge would not refuse.
 */
export async function diffBranch(ctx: AppContext, access: RepoAccess, branchName: string) {
  if (branchName === MAIN)
    fail("VALIDATION_FAILED", "query.branch: 'main' has no base to compare with; name another branch");
  const view = await resolveView(ctx.pool, access.repo.id, branchName, undefined);
  const main = await requireBranch(ctx.pool, access.repo.id, MAIN);
  const net = await netChanges(ctx.pool, view);
  const changes = await fileDiffs(ctx, access, net);
  const found = await conflictsWithMain(ctx.pool, view, main.head_sequence, net);
  const { conflicts } = await resolveConflicts(
    ctx.pool,
    ctx.blobs,
    access.repo.id,
    main,
    view.parentAt,
    net,
    found,
  );
  return { changes, conflicts };
}

/**
 * The diff of a merged or abandoned branch as it stood: its head against the base of `main` it
 * was last based on (kept in `branch_epochs`), so commits to `main` after the merge, the merge
 * commit included, never change it. A merged branch has no conflicts left to report.
 */
export async function diffAgainstBase(ctx: AppContext, access: RepoAccess, branchName: string) {
  const view = await resolveView(ctx.pool, access.repo.id, branchName, undefined);
  return { changes: await fileDiffs(ctx, access, await netChanges(ctx.pool, view)), conflicts: [] };
}
