import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { BranchRow } from "../branches/branches.ts";
import { type Conflict, conflictsWithMain, type NetChange, netChanges } from "../commits/changes.ts";
import { viewOf } from "../commits/view.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import type { PolicyResult } from "../policy/engine.ts";
import { readPolicySources } from "../policy/sources.ts";
import { policyInput } from "./input.ts";

/** Everything that decides whether a branch may merge, read from one snapshot. */
export interface Assessment {
  changes: NetChange[];
  conflicts: Conflict[];
  policies: PolicyResult[];
}

/** The `.svc/policy/*.rego` files on `main` at its head. */
async function policiesOnMain(db: Queryable, ctx: AppContext, repoId: number, main: BranchRow) {
  return readPolicySources(db, ctx.blobs, repoId, await viewOf(db, repoId, main));
}

/**
 * Compiles the policies on `main` now, outside any transaction: compiling runs `opa` and must not
 * hold row locks. The merge then finds them in the shared cache (a policy changed in between is
 * compiled inside, which is rare and still correct).
 */
export async function preparePolicies(ctx: AppContext, repoId: number, main: BranchRow): Promise<void> {
  await ctx.policies.prepare(ctx.pool, await policiesOnMain(ctx.pool, ctx, repoId, main));
}

/** Conflicts with `main`'s head and the policy results for merging `branch` at its head, as `actor`. */
export async function assessMerge(
  db: Queryable,
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  main: BranchRow,
  branch: BranchRow,
): Promise<Assessment> {
  const view = await viewOf(db, access.repo.id, branch);
  const changes = await netChanges(db, view);
  const conflicts = await conflictsWithMain(db, view, main.head_sequence, changes);
  const sources = await policiesOnMain(db, ctx, access.repo.id, main);
  const policies = await ctx.policies.evaluate(
    db,
    sources,
    await policyInput(db, actor, access, branch, changes),
  );
  return { changes, conflicts, policies };
}

export const allPass = (policies: PolicyResult[]) => policies.every((p) => p.pass);
