import type pg from "pg";
import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { closeOpenProposalOnAbandon } from "../proposals/proposals.ts";
import { MAIN, requireActive, requireBranch } from "./branches.ts";

const branch_update_abandoned = `UPDATE branches SET status = 'abandoned', updated_at = now() WHERE id = $1`;

/**
 * Marks a branch abandoned (the spec's branch delete); `main` cannot be. Merged and abandoned are
 * final. Its open proposal, if any, is closed in the same transaction: nothing can merge it now.
 */
export async function abandonBranch(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  name: string,
): Promise<void> {
  if (name === MAIN) fail("MAIN_BRANCH_PROTECTED", "'main' cannot be deleted");
  await withTx(pool, async (tx) => {
    const branch = await requireBranch(tx, access.repo.id, name, "update");
    requireActive(branch);
    await tx.query(branch_update_abandoned, [branch.id]);
    await closeOpenProposalOnAbandon(tx, access.repo, branch);
    await recordEvent(
      tx,
      "com.svc.branch.abandoned",
      { repo: access.repo.name, branch: name, abandoned_by: actor.identity },
      { repo: access.repo.name },
    );
  });
}
