import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { type BranchRow, MAIN, requireActive, requireBranch } from "../branches/branches.ts";
import { type Body, insertBodies, uploadLargeBodies } from "../commits/content.ts";
import { writeCommit } from "../commits/write.ts";
import type { AppContext } from "../context.ts";
import { Rollback, type Tx, withTx } from "../db/tx.ts";
import { DomainError, fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { markOpenProposalMerged } from "../proposals/proposals.ts";
import { type Assessment, allPass, assessMerge, preparePolicies } from "./assess.ts";

export interface MergeResult {
  /** The new head of `main` (unchanged when the branch changed nothing). */
  sequence: number;
  branch: string;
  merged_by: string;
  proposal_id: string | null;
  /** True when nothing was written: what the merge would have answered had it run now. */
  dry_run: boolean;
}

const branch_mark_merged = `
  UPDATE branches SET status = 'merged', merged_at = now(), merged_by = $2, merge_sequence = $3, updated_at = now()
  WHERE id = $1`;

/** Transaction work that, on a dry run, hands back its answer and rolls back everything it wrote. */
function undoneIf<T>(dryRun: boolean, work: (tx: Tx) => Promise<T>) {
  return async (tx: Tx): Promise<T> => {
    const answer = await work(tx);
    if (dryRun) throw new Rollback(answer);
    return answer;
  };
}

const sameAutoMerge = (branch: BranchRow, seen: { by: string; at: Date }) =>
  branch.auto_merge_by === seen.by && branch.auto_merge_at?.getTime() === seen.at.getTime();

/**
 * The 409 of a merge or rebase: each path that did not merge, with the places inside it both
 * sides changed differently, and the problems of an invalid `.svc/merge.yaml` if it is one.
 */
export function conflictError(
  code: "MERGE_CONFLICT" | "REBASE_CONFLICT",
  name: string,
  found: Pick<Assessment, "conflicts" | "mergeConfigErrors">,
): DomainError {
  const details: Record<string, unknown> = { conflicts: found.conflicts };
  if (found.mergeConfigErrors.length > 0) details["merge_config_errors"] = found.mergeConfigErrors;
  return new DomainError(code, `'${name}' conflicts with main`, { details });
}

/**
 * Stores the merged versions of files both sides changed. They exist only once merged, under the
 * locks; one above the blob threshold (a file of over a megabyte both sides changed: rare) is
 * uploaded here, which is harmless if the merge rolls back (blob keys are content hashes).
 */
export async function storeMerged(ctx: AppContext, tx: Tx, repoId: number, bodies: Body[]): Promise<void> {
  if (bodies.length === 0) return;
  const threshold = ctx.config.SVC_BLOB_THRESHOLD_BYTES;
  await uploadLargeBodies(ctx.blobs, repoId, bodies, threshold);
  await insertBodies(tx, repoId, bodies, threshold);
}

export function refuseMain(name: string, verb: string): void {
  if (name === MAIN)
    fail("VALIDATION_FAILED", `body.branch: 'main' cannot be ${verb} into itself; name another branch`);
}

/**
 * Merges a branch into `main` in one transaction. Lock order: `main`, then the branch, both FOR
 * UPDATE, so two merges, or a merge and a commit, on either branch never interleave. Under those
 * locks it finds conflicts (409 MERGE_CONFLICT), evaluates the policies against exactly the head
 * being merged (403 POLICY_DENIED, recording `merge.blocked` and nothing else), then writes the
 * branch's net changes as one commit on `main`, marks the branch and its open proposal merged,
 * and records `commit.created`, `branch.merged` and `proposal.merged`.
 *
 * A dry run does all of that, then rolls the transaction back: it answers exactly what the merge
 * would (the same 403 or 409, or the sequence and proposal it would have produced) and leaves no
 * commit, event or moved head behind (docs/merge.md).
 */
export async function mergeBranch(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  name: string,
  {
    dryRun = false,
    autoMergeSeen,
  }: {
    dryRun?: boolean;
    /**
     * For an auto-merge (auto-merge.ts): the enable the attempt saw. The merge goes ahead only if
     * it is still the branch's under the lock, so turning auto-merge off just before wins.
     */
    autoMergeSeen?: { by: string; at: Date };
  } = {},
): Promise<MergeResult> {
  refuseMain(name, "merged");
  await preparePolicies(ctx, access.repo.id, await requireBranch(ctx.pool, access.repo.id, MAIN));
  const outcome = await withTx(
    ctx.pool,
    undoneIf(dryRun, async (tx) => {
      const main = await requireBranch(tx, access.repo.id, MAIN, "update");
      const branch = await requireBranch(tx, access.repo.id, name, "update");
      requireActive(branch);
      if (autoMergeSeen && !sameAutoMerge(branch, autoMergeSeen))
        return { refused: new DomainError("PRECONDITION_FAILED", `auto-merge of '${name}' was turned off`) };
      if (branch.draft)
        fail(
          "BRANCH_DRAFT",
          `branch '${name}' is a draft; promote it with PATCH {"draft": false} before merging`,
        );
      const assessment = await assessMerge(tx, ctx, actor, access, main, branch);
      const { changes, conflicts, policies } = assessment;
      if (conflicts.length > 0) return { refused: conflictError("MERGE_CONFLICT", name, assessment) };
      if (!allPass(policies)) {
        const failing = policies.filter((p) => !p.pass).map((p) => p.name);
        await recordEvent(
          tx,
          "com.svc.merge.blocked",
          { repo: access.repo.name, branch: name, actor: actor.identity, policies: failing },
          { repo: access.repo.name },
        );
        return {
          refused: new DomainError("POLICY_DENIED", `merge blocked by ${failing.join(", ")}`, {
            details: { policies },
          }),
        };
      }
      const merged = new Map(assessment.merged.map((m) => [m.path, m.body]));
      await storeMerged(
        ctx,
        tx,
        access.repo.id,
        assessment.merged.map((m) => m.body),
      );
      const sequence =
        changes.length === 0
          ? main.head_sequence
          : await writeCommit(tx, access.repo, main, {
              author: actor.identity,
              message: `Merge branch '${name}'`,
              changes: changes.map((c) => {
                const body = merged.get(c.path);
                return body
                  ? { path: c.path, sha256: body.sha256, contentType: body.contentType, binary: false }
                  : { path: c.path, sha256: c.branchSha, contentType: c.contentType, binary: c.branchBinary };
              }),
            });
      await tx.query(branch_mark_merged, [branch.id, actor.identity, sequence]);
      const proposal = await markOpenProposalMerged(tx, access.repo, branch);
      await recordEvent(
        tx,
        "com.svc.branch.merged",
        { repo: access.repo.name, branch: name, sequence, merged_by: actor.identity },
        { repo: access.repo.name },
      );
      return {
        merged: {
          sequence,
          branch: name,
          merged_by: actor.identity,
          proposal_id: proposal?.id ?? null,
          dry_run: dryRun,
        },
      };
    }),
  );
  if ("refused" in outcome) throw outcome.refused;
  return outcome.merged;
}
