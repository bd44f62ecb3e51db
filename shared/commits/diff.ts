import { createTwoFilesPatch } from "diff";
import type { RepoAccess } from "../access/roles.ts";
import { MAIN, requireBranch } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import { fail } from "../errors.ts";
import { conflictsWithMain, type NetChange, netChanges } from "./changes.ts";
import { loadBody } from "./content.ts";
import { resolveView } from "./view.ts";

/** Text files larger than this get `diff: ""` rather than a unified diff. */
export const MAX_TEXT_DIFF_BYTES = 1_048_576;

async function textOf(ctx: AppContext, repoId: number, sha: Buffer | null): Promise<string | null> {
  if (sha === null) return "";
  const data = await loadBody(ctx.pool, ctx.blobs, repoId, sha);
  return data.length > MAX_TEXT_DIFF_BYTES ? null : data.toString("utf8");
}

/** A unified diff for a text change; "" for binary content or files above MAX_TEXT_DIFF_BYTES. */
async function unifiedDiff(ctx: AppContext, repoId: number, c: NetChange): Promise<string> {
  if (c.branchBinary || (c.mainSha && c.mainBinary)) return "";
  const [before, after] = await Promise.all([
    textOf(ctx, repoId, c.mainSha),
    textOf(ctx, repoId, c.branchSha),
  ]);
  if (before === null || after === null) return "";
  return createTwoFilesPatch(`a/${c.path}`, `b/${c.path}`, before, after, "", "", { context: 3 });
}

/**
 * The files changed on a branch relative to its base on `main` (a path changed and changed back
 * is not listed), with a unified diff for text files, and the conflicts: paths changed on both
 * `main` and the branch since the base, as {path, main_version_id, branch_version_id}.
 */
export async function diffBranch(ctx: AppContext, access: RepoAccess, branchName: string) {
  if (branchName === MAIN)
    fail("VALIDATION_FAILED", "query.branch: 'main' has no base to compare with; name another branch");
  const view = await resolveView(ctx.pool, access.repo.id, branchName, undefined);
  const main = await requireBranch(ctx.pool, access.repo.id, MAIN);
  const net = await netChanges(ctx.pool, view);
  const changes = [];
  for (const c of net) {
    const binary = c.branchBinary || (c.mainSha !== null && c.mainBinary);
    changes.push({ path: c.path, status: c.status, binary, diff: await unifiedDiff(ctx, access.repo.id, c) });
  }
  return { changes, conflicts: await conflictsWithMain(ctx.pool, view, main.head_sequence, net) };
}
