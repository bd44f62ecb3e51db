import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { type BranchRow, MAIN, requireActive, requireBranch } from "../branches/branches.ts";
import { conflictsWithMain, netChanges } from "../commits/changes.ts";
import { viewOf } from "../commits/view.ts";
import { type WrittenChange, writeCommit } from "../commits/write.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { recordEvent } from "../events/record.ts";
import { conflictError, refuseMain, storeMerged } from "./merge.ts";
import { mergeReplays, resolveConflicts } from "./resolve.ts";

export interface RebaseResult {
  branch: string;
  new_base_sequence: number;
  new_head_sequence: number;
  commits_replayed: number;
}

/**
 * The answer of `POST rebase`: the result (its fields are those of the `branch.rebased` event)
 * plus the branch's `base_sequence` and `head_sequence` after the rebase, under the names of the
 * branch record, which the spec's origin clients read (docs/merge.md).
 */
export type RebaseAnswer = RebaseResult & { base_sequence: number; head_sequence: number };

// The branch's commits in its current epoch with their changes to `paths`, in commit order.
const epoch_commits_select = `
  SELECT c.sequence, c.author, c.message,
         array_agg(f.path ORDER BY f.path) AS paths, array_agg(f.content_sha256 ORDER BY f.path) AS shas,
         array_agg(f.content_type ORDER BY f.path) AS content_types, array_agg(f.is_binary ORDER BY f.path) AS binaries
  FROM commits c JOIN file_changes f ON f.repo_id = c.repo_id AND f.sequence = c.sequence
  WHERE c.branch_id = $1 AND c.sequence BETWEEN $2 AND $3 AND f.path = ANY ($4::text[])
  GROUP BY c.sequence, c.author, c.message
  ORDER BY c.sequence`;
const epoch_insert = `INSERT INTO branch_epochs (branch_id, from_at, base_sequence, own_from) VALUES ($1, $2, $3, $2)`;
const branch_update_base = `UPDATE branches SET base_sequence = $2, updated_at = now() WHERE id = $1`;

interface Replay {
  author: string;
  message: string;
  changes: WrittenChange[];
}

/**
 * The branch's commits to replay, each keeping its author and message but only its changes to
 * paths the branch really changes: a path changed and changed back is left to `main`, as it
 * would be after a merge.
 */
async function replays(
  db: Queryable,
  branch: BranchRow,
  ownFrom: number,
  paths: string[],
): Promise<Replay[]> {
  const { rows } = await db.query(epoch_commits_select, [branch.id, ownFrom, branch.head_sequence, paths]);
  return rows.map((r) => ({
    author: r.author,
    message: r.message,
    changes: (r.paths as string[]).map((path, i) => ({
      path,
      sha256: r.shas[i],
      contentType: r.content_types[i],
      binary: r.binaries[i],
    })),
  }));
}

/**
 * Whether the `i`-th of `count` replayed commits records `commit.created`: only the last, the new
 * head. A rebase moves the branch to a new head in one step, as a force-push does on GitHub (one
 * push event for the new head): CI queues one job for the head, the state a merge would judge,
 * not one per intermediate replay, which no merge can use. The replayed commits' originals were
 * announced when first written; `branch.rebased` says how many were replayed.
 */
const announceHeadOnly = (i: number, count: number): boolean => i === count - 1;

/**
 * Replays a branch's changes onto the current head H of `main`, in one transaction. Locks `main`
 * FOR SHARE (its head cannot move) and the branch FOR UPDATE. With conflicts it changes nothing
 * (409 REBASE_CONFLICT). Otherwise the replayed commits get new sequences and a new epoch opens
 * at the first of them, over `main` at H; reads at earlier sequences keep their answers. A branch
 * with nothing to replay gets one empty commit marking the new base. Records `commit.created` for
 * the new head only, then `branch.rebased` (see `announceHeadOnly`).
 */
export async function rebaseBranch(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  name: string,
): Promise<RebaseAnswer> {
  refuseMain(name, "rebased");
  const outcome = await withTx(ctx.pool, async (tx) => {
    const main = await requireBranch(tx, access.repo.id, MAIN, "share");
    const branch = await requireBranch(tx, access.repo.id, name, "update");
    requireActive(branch);
    const base = main.head_sequence;
    if (branch.base_sequence === base) {
      return {
        rebased: {
          branch: name,
          new_base_sequence: base,
          new_head_sequence: branch.head_sequence,
          commits_replayed: 0,
        },
      };
    }
    const view = await viewOf(tx, access.repo.id, branch);
    const changes = await netChanges(tx, view);
    const found = await conflictsWithMain(tx, view, base, changes);
    const resolution = await resolveConflicts(
      tx,
      ctx.blobs,
      access.repo.id,
      main,
      view.parentAt,
      changes,
      found,
    );
    if (resolution.conflicts.length > 0)
      return {
        refused: conflictError("REBASE_CONFLICT", name, {
          conflicts: resolution.conflicts,
          mergeConfigErrors: resolution.configErrors,
        }),
      };

    const work = await replays(
      tx,
      branch,
      view.ownFrom,
      changes.map((c) => c.path),
    );
    const bodies = await mergeReplays(tx, ctx.blobs, access.repo.id, work, resolution, changes, found);
    await storeMerged(ctx, tx, access.repo.id, bodies);
    if (work.length === 0)
      work.push({ author: actor.identity, message: `Rebase '${name}' onto main at ${base}`, changes: [] });
    let first: number | undefined;
    for (const [i, commit] of work.entries()) {
      const announce = announceHeadOnly(i, work.length);
      const sequence = await writeCommit(tx, access.repo, branch, { ...commit, announce });
      first ??= sequence;
    }
    await tx.query(epoch_insert, [branch.id, first, base]);
    await tx.query(branch_update_base, [branch.id, base]);
    const result = {
      branch: name,
      new_base_sequence: base,
      new_head_sequence: branch.head_sequence,
      commits_replayed: changes.length === 0 ? 0 : work.length,
    };
    await recordEvent(
      tx,
      "com.svc.branch.rebased",
      { repo: access.repo.name, ...result, rebased_by: actor.identity },
      { repo: access.repo.name },
    );
    return { rebased: result };
  });
  if ("refused" in outcome) throw outcome.refused;
  const { rebased } = outcome;
  return { ...rebased, base_sequence: rebased.new_base_sequence, head_sequence: rebased.new_head_sequence };
}
