import { atLeast, type RepoAccess, roles } from "../access/roles.ts";
import type { VerifiedAttestation } from "../attestations/verified.ts";
import type { Actor } from "../auth/actor.ts";
import type { BranchRow } from "../branches/branches.ts";
import type { NetChange } from "../commits/changes.ts";
import type { Queryable } from "../db/pool.ts";
import type { DocumentDiff } from "../documents/changes.ts";
import type { PolicyInput } from "../policy/engine.ts";

// Only what is attached to the exact head being merged counts. A reviewer's latest review wins.
const reviews_at_head = `
  SELECT DISTINCT ON (reviewer) reviewer, status, sequence FROM reviews
  WHERE branch_id = $1 AND sequence = $2 ORDER BY reviewer, created_at DESC`;
const check_runs_at_head = `
  SELECT check_name, status, sequence FROM check_runs
  WHERE branch_id = $1 AND sequence = $2 ORDER BY check_name`;
const open_proposal = `
  SELECT p.id, b.name AS branch, p.base_branch, p.title, p.state
  FROM proposals p JOIN branches b ON b.id = p.branch_id
  WHERE p.branch_id = $1 AND p.state = 'open'`;

/** Every role the caller holds: its effective role and all below it, so `"writer" in actor_roles` reads naturally. */
export const rolesHeld = (access: RepoAccess): string[] => roles.filter((r) => atLeast(access.role, r));

/**
 * The policy input of DESIGN.md for merging `branch` at its current head: who asks, what the
 * branch changes (with the changed places of its JSON and YAML files), the reviews and check runs attached to exactly that head, and its open proposal.
 */
export async function policyInput(
  db: Queryable,
  actor: Actor,
  access: RepoAccess,
  branch: BranchRow,
  changes: NetChange[],
  extra: {
    owners: Record<string, string[]>;
    structure: Record<string, DocumentDiff>;
    attestations: VerifiedAttestation[];
  },
): Promise<PolicyInput> {
  const at = [branch.id, branch.head_sequence];
  // One after another: they share the caller's transaction client, which runs one query at a time.
  const reviews = await db.query(reviews_at_head, at);
  const checks = await db.query(check_runs_at_head, at);
  const proposal = await db.query(open_proposal, [branch.id]);
  return {
    actor: actor.identity,
    actor_roles: rolesHeld(access),
    action: "merge",
    repo: access.repo.name,
    branch: branch.name,
    draft: branch.draft,
    changed_paths: changes.map((c) => c.path),
    structure: extra.structure,
    reviews: reviews.rows,
    check_runs: checks.rows,
    attestations: extra.attestations,
    owners: extra.owners,
    head_sequence: branch.head_sequence,
    base_sequence: branch.base_sequence,
    proposal: proposal.rows[0] ?? null,
  };
}
