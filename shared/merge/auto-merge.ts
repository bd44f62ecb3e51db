import { atLeast, findRepoAccess, type RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { MAIN, requireActive, requireBranch } from "../branches/branches.ts";
import { globalAdminsOf } from "../config.ts";
import type { AppContext } from "../context.ts";
import { withTx } from "../db/tx.ts";
import { DomainError, fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { allPass } from "./assess.ts";
import { mergeBranch } from "./merge.ts";
import { branchStatus } from "./status.ts";

const auto_merge_set = `
  UPDATE branches SET auto_merge_by = $2, auto_merge_at = $3, updated_at = now()
  WHERE id = $1`;
// Turns off exactly the auto-merge an attempt saw (same enabler and time), so a failed attempt
// never turns off one enabled again since, and two instances failing the same attempt record one event.
const auto_merge_clear_seen = `
  UPDATE branches SET auto_merge_by = NULL, auto_merge_at = NULL, updated_at = now()
  WHERE id = $1 AND status = 'active' AND auto_merge_by = $2 AND auto_merge_at = $3`;
const auto_merge_select = `
  SELECT b.id, b.auto_merge_by, b.auto_merge_at FROM branches b JOIN repos r ON r.id = b.repo_id
  WHERE r.name = $1 AND b.name = $2 AND b.status = 'active' AND b.auto_merge_by IS NOT NULL`;

/** `main` is what branches merge into: it has no auto-merge of its own. */
function refuseMain(name: string, verb: "enable" | "disable"): void {
  if (name === MAIN) fail("VALIDATION_FAILED", `params.branch: cannot ${verb} auto-merge on branch 'main'`);
}

/**
 * Turns auto-merge on: the branch merges by itself, as `actor`, once its policies pass
 * (docs/auto-merge.md). Not for `main`, a draft or a branch that is no longer active. Already on:
 * unchanged (the first enabler stays the one it merges as), no event.
 */
export function enableAutoMerge(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  name: string,
): Promise<void> {
  refuseMain(name, "enable");
  return withTx(ctx.pool, async (tx) => {
    const branch = await requireBranch(tx, access.repo.id, name, "update");
    requireActive(branch);
    if (branch.draft)
      fail("BRANCH_DRAFT", `branch '${name}' is a draft; promote it with PATCH {"draft": false} first`);
    if (branch.auto_merge_by !== null) return;
    const enabledAt = ctx.clock.now();
    await tx.query(auto_merge_set, [branch.id, actor.identity, enabledAt]);
    await recordEvent(
      tx,
      "com.svc.branch.auto_merge.enabled",
      { repo: access.repo.name, branch: name, enabled_by: actor.identity },
      { repo: access.repo.name },
    );
  });
}

/** Turns auto-merge off. Already off: unchanged, no event. */
export function disableAutoMerge(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  name: string,
): Promise<void> {
  refuseMain(name, "disable");
  return withTx(ctx.pool, async (tx) => {
    const branch = await requireBranch(tx, access.repo.id, name, "update");
    requireActive(branch);
    if (branch.auto_merge_by === null) return;
    await tx.query(auto_merge_set, [branch.id, null, null]);
    await recordEvent(
      tx,
      "com.svc.branch.auto_merge.disabled",
      {
        repo: access.repo.name,
        branch: name,
        reason: "disabled",
        message: `turned off by ${actor.identity}`,
        disabled_by: actor.identity,
      },
      { repo: access.repo.name },
    );
  });
}

/** What one attempt did: merged; waits for the policies; found auto-merge off; turned it off. */
export type AttemptOutcome = "merged" | "waiting" | "off" | "disabled";

interface Seen {
  id: number;
  auto_merge_by: string;
  auto_merge_at: Date;
}

/** Turns off the auto-merge `seen` after a failed attempt, with an event that says why. */
async function disableAfterAttempt(
  ctx: AppContext,
  repo: string,
  branch: string,
  seen: Seen,
  failure: { reason: "conflict" | "refused"; message: string },
): Promise<AttemptOutcome> {
  return withTx(ctx.pool, async (tx) => {
    const { rowCount } = await tx.query(auto_merge_clear_seen, [
      seen.id,
      seen.auto_merge_by,
      seen.auto_merge_at,
    ]);
    if (!rowCount) return "off";
    await recordEvent(
      tx,
      "com.svc.branch.auto_merge.disabled",
      { repo, branch, disabled_by: seen.auto_merge_by, ...failure },
      { repo },
    );
    return "disabled";
  });
}

/**
 * Merges `branch` if auto-merge is on and its policies pass for the enabler now, as the enabler,
 * through the ordinary merge (its locks, events and guard: a branch merged meanwhile, by another
 * instance too, is simply no longer active). Policies not passing yet: it waits, records nothing.
 * A conflict, or any other refusal of the attempt (the enabler lost the role a merge needs), turns
 * auto-merge off with `branch.auto_merge.disabled`.
 */
export async function attemptAutoMerge(
  ctx: AppContext,
  repo: string,
  branch: string,
): Promise<AttemptOutcome> {
  const { rows } = await ctx.pool.query<Seen>(auto_merge_select, [repo, branch]);
  const seen = rows[0];
  if (seen === undefined) return "off";
  const actor: Actor = {
    identity: seen.auto_merge_by,
    globalAdmin: globalAdminsOf(ctx.config).includes(seen.auto_merge_by),
  };
  const access = await findRepoAccess(ctx.pool, repo, actor);
  // A merge needs the maintainer role (POST /merge), whoever asks for it and however.
  if (!access || !atLeast(access.role, "maintainer"))
    return disableAfterAttempt(ctx, repo, branch, seen, {
      reason: "refused",
      message: `FORBIDDEN: ${seen.auto_merge_by} may not merge into main of '${repo}': it needs the maintainer role`,
    });
  try {
    if (!allPass((await branchStatus(ctx, actor, access, branch)).policies)) return "waiting";
    await mergeBranch(ctx, actor, access, branch, {
      autoMergeSeen: { by: seen.auto_merge_by, at: seen.auto_merge_at },
    });
    return "merged";
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    // Merged meanwhile (by a person, or another instance), or auto-merge was turned off.
    if (["BRANCH_NOT_ACTIVE", "BRANCH_NOT_FOUND", "PRECONDITION_FAILED"].includes(err.code)) return "off";
    // The head moved between the status and the merge: the next event decides again.
    if (err.code === "POLICY_DENIED") return "waiting";
    if (err.code === "MERGE_CONFLICT")
      return disableAfterAttempt(ctx, repo, branch, seen, { reason: "conflict", message: err.message });
    return disableAfterAttempt(ctx, repo, branch, seen, {
      reason: "refused",
      message: `${err.code}: ${err.message}`,
    });
  }
}
