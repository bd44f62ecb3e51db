import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { MAIN, requireActive, requireBranch } from "../branches/branches.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { upToAt } from "./at.ts";

export const reviewStatuses = ["approved", "rejected"] as const;
export type ReviewStatus = (typeof reviewStatuses)[number];
export const MAX_REVIEW_BODY = 65_536;

/** The wire shape of a review (spec "Review"). */
export interface ReviewRecord {
  id: string;
  branch: string;
  status: ReviewStatus;
  body: string;
  reviewer: string;
  sequence: number;
  created_at: Date;
}

export interface ReviewRequest {
  branch: string;
  status: ReviewStatus;
  body: string;
}

interface ReviewRow {
  id: string;
  sequence: number;
  status: ReviewStatus;
  body: string;
  reviewer: string;
  created_at: Date;
}

const toReviewRecord = (branch: string, r: ReviewRow): ReviewRecord => ({
  id: r.id,
  branch,
  status: r.status,
  body: r.body,
  reviewer: r.reviewer,
  sequence: r.sequence,
  created_at: r.created_at,
});

// clock_timestamp, not now(): the moment of the insert, so list order is submission order.
const review_insert = `
  INSERT INTO reviews (id, repo_id, branch_id, sequence, status, body, reviewer, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp())
  RETURNING id::text, sequence, status, body, reviewer, created_at`;
const authored_on_branch = `SELECT 1 FROM commits WHERE branch_id = $1 AND author = $2 LIMIT 1`;
const reviews_select = `
  SELECT id::text, sequence, status, body, reviewer, created_at FROM reviews
  WHERE branch_id = $1 AND sequence <= $2
  ORDER BY created_at, id`;

const authored_on_named_branch = `
  SELECT 1 FROM commits c JOIN branches b ON b.id = c.branch_id
  WHERE b.repo_id = $1 AND b.name = $2 AND c.author = $3 LIMIT 1`;

/** Whether `identity` authored a commit on the branch, and so may not approve it (the web form asks). */
export async function authoredOnBranch(
  db: Queryable,
  access: RepoAccess,
  branch: string,
  identity: string,
): Promise<boolean> {
  const { rowCount } = await db.query(authored_on_named_branch, [access.repo.id, branch, identity]);
  return Boolean(rowCount);
}

/**
 * Records a review of a branch, attached to its current head. The branch row is held FOR SHARE, so
 * no commit can move the head between reading it and recording the review. Reviews are for
 * branches other than `main`, and only active ones; someone who authored a commit on the branch
 * may reject it but not approve it.
 */
export async function submitReview(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  input: ReviewRequest,
): Promise<ReviewRecord> {
  if (input.branch === MAIN)
    fail("VALIDATION_FAILED", "body.branch: 'main' cannot be reviewed; review the branch to be merged");
  return withTx(pool, async (tx) => {
    const branch = await requireBranch(tx, access.repo.id, input.branch, "share");
    requireActive(branch);
    if (input.status === "approved") {
      const { rowCount } = await tx.query(authored_on_branch, [branch.id, actor.identity]);
      if (rowCount)
        fail(
          "SELF_APPROVAL",
          `'${actor.identity}' authored commits on '${branch.name}' and cannot approve it`,
        );
    }
    const { rows } = await tx.query(review_insert, [
      randomUUID(),
      access.repo.id,
      branch.id,
      branch.head_sequence,
      input.status,
      input.body,
      actor.identity,
    ]);
    await recordEvent(
      tx,
      "com.svc.review.submitted",
      {
        repo: access.repo.name,
        branch: branch.name,
        sequence: branch.head_sequence,
        reviewer: actor.identity,
        status: input.status,
      },
      { repo: access.repo.name },
    );
    return toReviewRecord(branch.name, rows[0]);
  });
}

/** The reviews of a branch attached at or before `at` (default: its head), oldest first. */
export async function listReviews(
  db: Queryable,
  access: RepoAccess,
  q: { branch: string; at?: number },
): Promise<ReviewRecord[]> {
  const branch = await requireBranch(db, access.repo.id, q.branch);
  const { rows } = await db.query(reviews_select, [branch.id, upToAt(branch, q.at)]);
  return rows.map((r) => toReviewRecord(branch.name, r));
}
