import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { MAIN, requireBranch } from "../branches/branches.ts";
import type { Conflict } from "../commits/changes.ts";
import type { AppContext } from "../context.ts";
import { withTx } from "../db/tx.ts";
import type { PolicyResult } from "../policy/engine.ts";
import { allPass, assessMerge, type OwnersReport, preparePolicies } from "./assess.ts";
import { refuseMain } from "./merge.ts";

export interface BranchStatusReport {
  mergeable: boolean;
  policies: PolicyResult[];
  conflicts: Conflict[];
  owners: OwnersReport;
  /** Auto-merge is on (docs/auto-merge.md). */
  auto_merge: boolean;
}

/**
 * What a merge by the caller would decide now, without merging: the same assessment as the
 * merge, read from one REPEATABLE READ snapshot and taking no locks. `mergeable` is also false for
 * a draft, merged or abandoned branch.
 */
export async function branchStatus(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  name: string,
): Promise<BranchStatusReport> {
  refuseMain(name, "merged");
  await preparePolicies(ctx, access.repo.id, await requireBranch(ctx.pool, access.repo.id, MAIN));
  return withTx(
    ctx.pool,
    async (tx) => {
      const main = await requireBranch(tx, access.repo.id, MAIN);
      const branch = await requireBranch(tx, access.repo.id, name);
      const { conflicts, policies, owners } = await assessMerge(tx, ctx, actor, access, main, branch);
      const mergeable =
        branch.status === "active" && !branch.draft && conflicts.length === 0 && allPass(policies);
      return { mergeable, policies, conflicts, owners, auto_merge: branch.auto_merge_by !== null };
    },
    { readOnlySnapshot: true },
  );
}
