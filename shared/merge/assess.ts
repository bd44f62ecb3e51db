import type { RepoAccess } from "../access/roles.ts";
import { verifiedAttestations } from "../attestations/verified.ts";
import type { Actor } from "../auth/actor.ts";
import type { BranchRow } from "../branches/branches.ts";
import { conflictsWithMain, type NetChange, netChanges } from "../commits/changes.ts";
import { structureOfChanges } from "../commits/structure.ts";
import { type View, viewOf } from "../commits/view.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import type { PolicyResult } from "../policy/engine.ts";
import { readPolicySources } from "../policy/sources.ts";
import { policyInput } from "./input.ts";
import { type OwnersOfChanges, type PathOwners, pathOwners, readOwners } from "./owners.ts";
import { type FileConflict, type MergedFile, type Resolution, resolveConflicts } from "./resolve.ts";

/** Everything that decides whether a branch may merge, read from one snapshot. */
export interface Assessment {
  changes: NetChange[];
  /** The paths both sides changed that do not merge by content (resolve.ts). */
  conflicts: FileConflict[];
  /** The paths both sides changed whose versions merged: written instead of the branch's. */
  merged: MergedFile[];
  /** The problems of an invalid `.svc/merge.yaml`, whose conflicts are then whole files. */
  mergeConfigErrors: Resolution["configErrors"];
  policies: PolicyResult[];
  owners: OwnersReport;
}

/** The owners of the changed paths as the branch status reports them (docs/owners.md). */
export interface OwnersReport {
  paths: PathOwners[];
  invalid_lines: OwnersOfChanges["invalid"];
}

/** The `.svc/policy/*.rego` files on `main` at its head. */
const policiesOnMain = (db: Queryable, ctx: AppContext, repoId: number, main: View) =>
  readPolicySources(db, ctx.blobs, repoId, main);

/**
 * Compiles the policies on `main` now, outside any transaction: compiling runs `opa` and must not
 * hold row locks. The merge then finds them in the shared cache (a policy changed in between is
 * compiled inside, which is rare and still correct).
 */
export async function preparePolicies(ctx: AppContext, repoId: number, main: BranchRow): Promise<void> {
  const view = await viewOf(ctx.pool, repoId, main);
  await ctx.policies.prepare(ctx.pool, await policiesOnMain(ctx.pool, ctx, repoId, view));
}

/**
 * Conflicts with `main`'s head, after merging by content each path both sides changed
 * (resolve.ts), and the policy results for merging `branch` at its head, as `actor`.
 */
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
  const found = await conflictsWithMain(db, view, main.head_sequence, changes);
  const resolution = await resolveConflicts(
    db,
    ctx.blobs,
    access.repo.id,
    main,
    view.parentAt,
    changes,
    found,
  );
  // Policies and OWNERS both come from main's head: the branch cannot loosen its own rules.
  const mainView = await viewOf(db, access.repo.id, main);
  const sources = await policiesOnMain(db, ctx, access.repo.id, mainView);
  const paths = changes.map((c) => c.path);
  const owners = await readOwners(db, ctx.blobs, access.repo.id, mainView, paths);
  const structure = await structureOfChanges(db, ctx.blobs, access.repo.id, changes);
  const attestations = await verifiedAttestations(db, await ctx.logSigner.publicKey(), access.repo, branch);
  const input = await policyInput(db, actor, access, branch, changes, {
    owners: owners.owners,
    structure,
    attestations,
  });
  const policies = await ctx.policies.evaluate(db, sources, input);
  // The input's reviews are each reviewer's latest at the head, so these approved the head.
  const approvers = new Set(input.reviews.filter((r) => r.status === "approved").map((r) => r.reviewer));
  return {
    changes,
    conflicts: resolution.conflicts,
    merged: resolution.merged,
    mergeConfigErrors: resolution.configErrors,
    policies,
    owners: { paths: pathOwners(owners.owners, paths, approvers), invalid_lines: owners.invalid },
  };
}

export const allPass = (policies: PolicyResult[]) => policies.every((p) => p.pass);
