import { randomUUID } from "node:crypto";
import type pg from "pg";
import { atLeast, type RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { MAIN, requireActive, requireBranch } from "../branches/branches.ts";
import type { Queryable } from "../db/pool.ts";
import { type Tx, withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { nextItemNumber } from "../repos/item-numbers.ts";
import type { OpenProposalRequest, PatchProposalRequest } from "./api.ts";

export type ProposalState = "open" | "closed" | "merged";

/** The wire shape of a proposal (spec "Proposal"). */
export interface ProposalRecord {
  id: string;
  /** 1, 2, 3… per repo, in the order proposals were opened (`#12` in the web pages). */
  number: number;
  /** Full repo name. */
  repo: string;
  /** Source branch. */
  branch: string;
  base_branch: string;
  title: string;
  description: string;
  author: string;
  state: ProposalState;
  created_at: Date;
  updated_at: Date;
}

/** A repo or a branch as the hooks called from merge and abandon need them. */
export interface Named {
  id: number;
  name: string;
}

// The columns of `proposals` a record needs besides the repo and branch names.
const own_columns = "id, number, base_branch, title, description, author, state, created_at, updated_at";
const record_select = `
  SELECT p.id, p.number, r.name AS repo, b.name AS branch, p.base_branch, p.title, p.description, p.author,
         p.state, p.created_at, p.updated_at
  FROM proposals p JOIN branches b ON b.id = p.branch_id JOIN repos r ON r.id = p.repo_id`;
const proposal_select_by_id = `${record_select} WHERE p.repo_id = $1 AND p.id = $2`;
const proposal_select_by_number = `${record_select} WHERE p.repo_id = $1 AND p.number = $2`;
const proposal_select_open_of_branch = `${record_select} WHERE p.branch_id = $1 AND p.state = 'open'`;
const proposal_select_list = `${record_select}
  WHERE p.repo_id = $1 AND ($2::text IS NULL OR p.state = $2) AND ($3::text IS NULL OR b.name = $3)
  ORDER BY p.created_at DESC, p.id DESC`;
// The partial unique index proposals_one_open_per_branch is the arbiter: a second open proposal,
// also one racing this insert from another transaction, inserts nothing.
const proposal_insert = `
  INSERT INTO proposals (id, repo_id, branch_id, base_branch, title, description, author, opened_at_sequence, number)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
  ON CONFLICT (branch_id) WHERE state = 'open' DO NOTHING
  RETURNING ${own_columns}`;
const proposal_lock = `SELECT ${own_columns} FROM proposals WHERE repo_id = $1 AND id = $2 FOR UPDATE`;
const proposal_update_text = `
  UPDATE proposals SET title = coalesce($2, title), description = coalesce($3, description), updated_at = now()
  WHERE id = $1 RETURNING ${own_columns}`;
const proposal_update_state = `UPDATE proposals SET state = $2, updated_at = now() WHERE id = $1 RETURNING ${own_columns}`;
const proposal_settle_open_of_branch = `
  UPDATE proposals SET state = $3, updated_at = now()
  WHERE repo_id = $1 AND branch_id = $2 AND state = 'open'
  RETURNING ${own_columns}`;

/** A proposal row: the record without the names it is shown with. */
type OwnRow = Omit<ProposalRecord, "repo" | "branch">;

const toRecord = (row: OwnRow, repo: string, branch: string): ProposalRecord => ({
  id: row.id,
  number: row.number,
  repo,
  branch,
  base_branch: row.base_branch,
  title: row.title,
  description: row.description,
  author: row.author,
  state: row.state,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/**
 * Opens a proposal to merge `branch` into `base_branch`. The source branch must exist, be active
 * and not be `main`; the base must exist, be active and differ from the source. A branch has at
 * most one open proposal (409 PROPOSAL_EXISTS). The source branch is read FOR SHARE, so it cannot
 * be merged or abandoned between the check and the insert. Records `proposal.opened` with the
 * branch head.
 */
export async function openProposal(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  input: OpenProposalRequest,
): Promise<ProposalRecord> {
  if (input.branch === MAIN)
    fail("VALIDATION_FAILED", "body.branch: a proposal cannot be opened from 'main'");
  if (input.branch === input.base_branch)
    fail("VALIDATION_FAILED", "body.base_branch: must differ from body.branch");
  return withTx(pool, async (tx) => {
    const branch = await requireBranch(tx, access.repo.id, input.branch, "share");
    requireActive(branch);
    const base = await requireBranch(tx, access.repo.id, input.base_branch);
    requireActive(base);
    // Taken before the insert, so two openings racing for one branch queue here, never deadlock.
    const number = await nextItemNumber(tx, access.repo.id);
    const { rows } = await tx.query(proposal_insert, [
      randomUUID(),
      access.repo.id,
      branch.id,
      base.name,
      input.title,
      input.description,
      actor.identity,
      branch.head_sequence,
      number,
    ]);
    if (!rows[0]) fail("PROPOSAL_EXISTS", `branch '${branch.name}' already has an open proposal`);
    const proposal = toRecord(rows[0], access.repo.name, branch.name);
    await recordEvent(
      tx,
      "com.svc.proposal.opened",
      {
        repo: access.repo.name,
        branch: branch.name,
        base_branch: base.name,
        proposal_id: proposal.id,
        author: actor.identity,
        sequence: branch.head_sequence,
      },
      { repo: access.repo.name },
    );
    return proposal;
  });
}

/** The repo's proposals, newest first, optionally only those in `state` or from `branch`. */
export async function listProposals(
  db: Queryable,
  access: RepoAccess,
  filter: { state?: ProposalState | undefined; branch?: string | undefined },
): Promise<ProposalRecord[]> {
  const { rows } = await db.query(proposal_select_list, [
    access.repo.id,
    filter.state ?? null,
    filter.branch ?? null,
  ]);
  return rows;
}

export async function getProposal(db: Queryable, access: RepoAccess, id: string): Promise<ProposalRecord> {
  const { rows } = await db.query(proposal_select_by_id, [access.repo.id, id]);
  if (!rows[0]) fail("PROPOSAL_NOT_FOUND", `proposal '${id}' not found in '${access.repo.name}'`);
  return rows[0];
}

/** A proposal by its number in the repo (`#12`), or PROPOSAL_NOT_FOUND. */
export async function getProposalByNumber(
  db: Queryable,
  access: RepoAccess,
  number: number,
): Promise<ProposalRecord> {
  const { rows } = await db.query(proposal_select_by_number, [access.repo.id, number]);
  if (!rows[0]) fail("PROPOSAL_NOT_FOUND", `proposal #${number} not found in '${access.repo.name}'`);
  return rows[0];
}

/**
 * Locks a proposal for a change by its author or a maintainer: 404 when it does not exist, 403 for
 * anyone else, 409 PROPOSAL_NOT_OPEN once it is closed or merged.
 */
async function lockForChange(tx: Tx, actor: Actor, access: RepoAccess, id: string): Promise<OwnRow> {
  const { rows } = await tx.query(proposal_lock, [access.repo.id, id]);
  const row: OwnRow | undefined = rows[0];
  if (!row) fail("PROPOSAL_NOT_FOUND", `proposal '${id}' not found in '${access.repo.name}'`);
  if (row.author !== actor.identity && !atLeast(access.role, "maintainer"))
    fail("FORBIDDEN", "only the proposal's author or a maintainer may change it");
  if (row.state !== "open") fail("PROPOSAL_NOT_OPEN", `proposal '${id}' is ${row.state}`);
  return row;
}

/** Changes the title and/or description of an open proposal; bumps `updated_at`. */
export async function patchProposal(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  id: string,
  input: PatchProposalRequest,
): Promise<ProposalRecord> {
  return withTx(pool, async (tx) => {
    await lockForChange(tx, actor, access, id);
    await tx.query(proposal_update_text, [id, input.title ?? null, input.description ?? null]);
    return getProposal(tx, access, id);
  });
}

/** Closes an open proposal without merging; records `proposal.closed`. */
export async function closeProposal(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  id: string,
): Promise<ProposalRecord> {
  return withTx(pool, async (tx) => {
    await lockForChange(tx, actor, access, id);
    await tx.query(proposal_update_state, [id, "closed"]);
    const proposal = await getProposal(tx, access, id);
    await recordEvent(
      tx,
      "com.svc.proposal.closed",
      { repo: proposal.repo, branch: proposal.branch, proposal_id: id },
      { repo: proposal.repo },
    );
    return proposal;
  });
}

/** The branch's open proposal, or null (the merge policy input's `proposal`). */
export async function openProposalOf(db: Queryable, branchId: number): Promise<ProposalRecord | null> {
  const { rows } = await db.query(proposal_select_open_of_branch, [branchId]);
  return rows[0] ?? null;
}

/**
 * Inside the caller's transaction, moves the branch's open proposal (if any) to `state` and records
 * its event (`proposal.merged` or `proposal.closed`). Returns the proposal, or null (and records
 * nothing) when the branch had none open.
 */
async function settleOpenProposal(
  tx: Tx,
  repo: Named,
  branch: Named,
  state: "merged" | "closed",
): Promise<ProposalRecord | null> {
  const { rows } = await tx.query(proposal_settle_open_of_branch, [repo.id, branch.id, state]);
  if (!rows[0]) return null;
  const proposal = toRecord(rows[0], repo.name, branch.name);
  const scope = { repo: repo.name };
  if (state === "merged") {
    const data = {
      repo: repo.name,
      branch: branch.name,
      base_branch: proposal.base_branch,
      proposal_id: proposal.id,
    };
    await recordEvent(tx, "com.svc.proposal.merged", data, scope);
  } else {
    await recordEvent(
      tx,
      "com.svc.proposal.closed",
      { repo: repo.name, branch: branch.name, proposal_id: proposal.id },
      scope,
    );
  }
  return proposal;
}

/** For the merge, in its transaction: the branch's open proposal becomes `merged` (`proposal.merged`). */
export const markOpenProposalMerged = (tx: Tx, repo: Named, branch: Named) =>
  settleOpenProposal(tx, repo, branch, "merged");

/**
 * For abandoning a branch, in its transaction: the branch's open proposal becomes `closed`
 * (`proposal.closed`), so no proposal stays open on a branch that can never be merged.
 */
export const closeOpenProposalOnAbandon = (tx: Tx, repo: Named, branch: Named) =>
  settleOpenProposal(tx, repo, branch, "closed");
