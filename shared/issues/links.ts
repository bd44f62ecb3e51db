import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { Queryable } from "../db/pool.ts";
import { type Tx, withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import type { IssueLinkRequest } from "./api.ts";
import { getIssue, type IssueRecord } from "./issues.ts";

/*
 * Links made by hand from an issue to a commit or a proposal (docs/issues.md): the origin system's
 * `POST …/-/issues/{n}/refs`. A `#n` written in a text is found when read (mentions.ts); a link is
 * a row, for what the text does not say (a commit made before the issue, a proposal that fixes it
 * without naming it). Both kinds answer the same reads.
 */

/** A link as `GET …/refs` lists it, in the origin system's shape. */
export interface LinkRecord {
  id: string;
  issue_id: string;
  repo: string;
  ref_type: "commit" | "proposal";
  ref_id: string;
  created_at: Date;
}

// FOR KEY SHARE: a purge of the commit or a delete of the proposal waits for the link's
// transaction, so the link's foreign key never finds its target gone (a 500).
const commit_lock = "SELECT sequence FROM commits WHERE repo_id = $1 AND sequence = $2 FOR KEY SHARE";
const proposal_lock = "SELECT id FROM proposals WHERE repo_id = $1 AND id = $2 FOR KEY SHARE";
const link_insert = `
  INSERT INTO issue_refs (id, repo_id, issue_id, commit_sequence, proposal_id, created_by, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, now())
  ON CONFLICT DO NOTHING
  RETURNING created_at`;
const link_columns = `r.id::text, r.issue_id::text, CASE WHEN r.commit_sequence IS NULL THEN 'proposal' ELSE 'commit' END
  AS ref_type, coalesce(r.commit_sequence::text, r.proposal_id::text) AS ref_id, r.created_at`;
const links_of_issue = `SELECT ${link_columns} FROM issue_refs r WHERE r.issue_id = $1 ORDER BY r.created_at, r.id`;
const issues_linked_to_commit = `
  SELECT i.number FROM issue_refs r JOIN issues i ON i.id = r.issue_id
  WHERE r.repo_id = $1 AND r.commit_sequence = $2`;
const issues_linked_to_proposal = `
  SELECT i.number FROM issue_refs r JOIN issues i ON i.id = r.issue_id
  WHERE r.repo_id = $1 AND r.proposal_id = $2`;

/** Locks the link's target in the repo: COMMIT_NOT_FOUND or PROPOSAL_NOT_FOUND when it is not there. */
async function lockTarget(tx: Tx, access: RepoAccess, link: IssueLinkRequest): Promise<void> {
  if (link.ref_type === "commit") {
    const { rows } = await tx.query(commit_lock, [access.repo.id, link.sequence]);
    if (rows.length === 0) fail("COMMIT_NOT_FOUND", `no commit ${link.sequence} in '${access.repo.name}'`);
    return;
  }
  const { rows } = await tx.query(proposal_lock, [access.repo.id, link.ref_id]);
  if (rows.length === 0)
    fail("PROPOSAL_NOT_FOUND", `proposal '${link.ref_id}' not found in '${access.repo.name}'`);
}

/**
 * Links issue `#number` to a commit (by sequence) or a proposal (by id) of the same repo; records
 * `issue.linked`. The same link twice is 409 ISSUE_REF_EXISTS, as the origin answers it.
 */
export async function linkIssue(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  number: number,
  link: IssueLinkRequest,
): Promise<LinkRecord> {
  return withTx(pool, async (tx) => {
    const issue = await getIssue(tx, access, number);
    await lockTarget(tx, access, link);
    const id = randomUUID();
    const { rows } = await tx.query<{ created_at: Date }>(link_insert, [
      id,
      access.repo.id,
      issue.id,
      link.ref_type === "commit" ? link.sequence : null,
      link.ref_type === "proposal" ? link.ref_id : null,
      actor.identity,
    ]);
    const [inserted] = rows;
    if (!inserted)
      fail("ISSUE_REF_EXISTS", `issue #${number} is already linked to ${link.ref_type} ${link.ref_id}`);
    await recordEvent(
      tx,
      "com.svc.issue.linked",
      {
        repo: access.repo.name,
        issue_id: issue.id,
        number,
        ref_type: link.ref_type,
        ref_id: link.ref_id,
        linked_by: actor.identity,
      },
      { repo: access.repo.name },
    );
    return {
      id,
      issue_id: issue.id,
      repo: access.repo.name,
      ref_type: link.ref_type,
      ref_id: link.ref_id,
      created_at: inserted.created_at,
    };
  });
}

/** The links made by hand from an issue, oldest first. */
export async function linksOf(db: Queryable, access: RepoAccess, issue: IssueRecord): Promise<LinkRecord[]> {
  const { rows } = await db.query<Omit<LinkRecord, "repo">>(links_of_issue, [issue.id]);
  return rows.map((r) => ({ ...r, repo: access.repo.name }));
}

/** The numbers of the issues linked by hand to a commit or a proposal of the repo. */
export async function issueNumbersLinkedTo(
  db: Queryable,
  access: RepoAccess,
  target: { sequence: number } | { proposal: string },
): Promise<number[]> {
  const { rows } = await db.query<{ number: string | number }>(
    "sequence" in target ? issues_linked_to_commit : issues_linked_to_proposal,
    [access.repo.id, "sequence" in target ? target.sequence : target.proposal],
  );
  return rows.map((r) => Number(r.number));
}
