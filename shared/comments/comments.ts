import { randomUUID } from "node:crypto";
import type pg from "pg";
import { atLeast, type RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { requireActive, requireBranch } from "../branches/branches.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";

export const MAX_COMMENT_BODY = 65_536;

/** The wire shape of a review comment (docs/reviews.md). */
export interface CommentRecord {
  id: string;
  branch: string;
  path: string;
  /** The comment this one answers, on the same branch and path; null for a comment of its own. */
  reply_to: string | null;
  body: string;
  author: string;
  sequence: number;
  created_at: Date;
}

export interface CommentRequest {
  branch: string;
  path: string;
  body: string;
  reply_to?: string | undefined;
}

type CommentRow = Omit<CommentRecord, "branch">;

const toCommentRecord = (branch: string, r: CommentRow): CommentRecord => ({
  id: r.id,
  branch,
  path: r.path,
  reply_to: r.reply_to,
  body: r.body,
  author: r.author,
  sequence: r.sequence,
  created_at: r.created_at,
});

const comment_columns = "id::text, path, reply_to::text, body, author, sequence, created_at";
// clock_timestamp, not now(): the moment of the insert, so list order is the order of creation.
const comment_insert = `
  INSERT INTO comments (id, repo_id, branch_id, path, sequence, body, author, reply_to, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp())
  RETURNING ${comment_columns}`;
const comments_select = `
  SELECT ${comment_columns} FROM comments
  WHERE branch_id = $1 AND ($2::text IS NULL OR path = $2)
  ORDER BY created_at, id`;
const comment_select_for_delete = `SELECT author FROM comments WHERE id = $1 AND repo_id = $2 FOR UPDATE`;
const comment_delete = `DELETE FROM comments WHERE id = $1`;
// FOR KEY SHARE: the parent cannot be deleted while its reply is being inserted.
const comment_parent_select = `
  SELECT 1 FROM comments WHERE id = $1 AND branch_id = $2 AND path = $3 FOR KEY SHARE`;

/**
 * Adds a comment on a file of an active branch, attached to the branch's head at that moment (the
 * branch row is held FOR SHARE meanwhile). The path need not exist on the branch. A reply
 * (`reply_to`) must answer a comment on the same branch and path (400 otherwise). Comments have no
 * event type in the spec, so none is recorded.
 */
export async function addComment(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  input: CommentRequest,
): Promise<CommentRecord> {
  return withTx(pool, async (tx) => {
    const branch = await requireBranch(tx, access.repo.id, input.branch, "share");
    requireActive(branch);
    if (input.reply_to !== undefined) {
      const parent = await tx.query(comment_parent_select, [input.reply_to, branch.id, input.path]);
      if (!parent.rows[0])
        fail(
          "VALIDATION_FAILED",
          `body.reply_to: no comment '${input.reply_to}' on '${input.path}' of branch '${branch.name}'`,
        );
    }
    const { rows } = await tx.query(comment_insert, [
      randomUUID(),
      access.repo.id,
      branch.id,
      input.path,
      branch.head_sequence,
      input.body,
      actor.identity,
      input.reply_to ?? null,
    ]);
    return toCommentRecord(branch.name, rows[0]);
  });
}

/** The comments on a branch, optionally only those on `path`, oldest first. */
export async function listComments(
  db: Queryable,
  access: RepoAccess,
  q: { branch: string; path?: string | undefined },
): Promise<CommentRecord[]> {
  const branch = await requireBranch(db, access.repo.id, q.branch);
  const { rows } = await db.query(comments_select, [branch.id, q.path ?? null]);
  return rows.map((r) => toCommentRecord(branch.name, r));
}

/**
 * Deletes a comment of this repo. Its author deletes it with the writer role (the route's minimum);
 * anyone else needs maintainer.
 */
export async function deleteComment(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  id: string,
): Promise<void> {
  await withTx(pool, async (tx) => {
    const { rows } = await tx.query(comment_select_for_delete, [id, access.repo.id]);
    if (!rows[0]) fail("COMMENT_NOT_FOUND", `comment '${id}' not found in '${access.repo.name}'`);
    if (rows[0].author !== actor.identity && !atLeast(access.role, "maintainer"))
      fail("FORBIDDEN", "deleting another identity's comment needs the maintainer role");
    await tx.query(comment_delete, [id]);
  });
}
