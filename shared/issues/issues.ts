import { randomUUID } from "node:crypto";
import type pg from "pg";
import { atLeast, type RepoAccess } from "../access/roles.ts";
import type { IssueCommentResponse, IssueResponse } from "../api/issues.ts";
import type { Actor } from "../auth/actor.ts";
import type { Queryable } from "../db/pool.ts";
import { type Tx, withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { nextItemNumber } from "../repos/item-numbers.ts";
import type {
  closeReasons,
  IssueCommentRequest,
  IssueListQuery,
  OpenIssueRequest,
  PatchIssueRequest,
} from "./api.ts";

/** An issue as the API answers it (dates as Date until JSON renders them). */
export type IssueRecord = Omit<IssueResponse, "created_at" | "updated_at" | "closed_at"> & {
  created_at: Date;
  updated_at: Date;
  closed_at: Date | null;
};
export type IssueCommentRecord = Omit<IssueCommentResponse, "created_at" | "edited_at"> & {
  created_at: Date;
  edited_at: Date | null;
};
type CloseReason = (typeof closeReasons)[number];

const issue_columns = `i.id::text, r.name AS repo, i.number, i.title, i.body, i.author, i.state, i.close_reason,
  i.closed_by, i.closed_at, i.labels, i.assignees, i.created_at, i.updated_at`;
const issue_from = "FROM issues i JOIN repos r ON r.id = i.repo_id";
const issue_select_by_number = `SELECT ${issue_columns} ${issue_from} WHERE i.repo_id = $1 AND i.number = $2`;
const issues_select_by_numbers = `SELECT ${issue_columns} ${issue_from}
  WHERE i.repo_id = $1 AND i.number = ANY ($2::bigint[]) ORDER BY i.number`;
const issue_lock_by_number = `SELECT id::text, author, state FROM issues WHERE repo_id = $1 AND number = $2 FOR UPDATE`;
const issue_select_list = `SELECT ${issue_columns} ${issue_from}
  WHERE i.repo_id = $1 AND ($2::text IS NULL OR i.state = $2)
    AND ($3::text IS NULL OR $3 = ANY (i.labels)) AND ($4::text IS NULL OR $4 = ANY (i.assignees))
    AND ($5::text IS NULL OR i.author = $5) AND ($6::bigint IS NULL OR i.number < $6)
  ORDER BY i.number DESC LIMIT $7`;
const issue_insert = `
  INSERT INTO issues (id, repo_id, number, title, body, author, labels, assignees, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now(), now())`;
const issue_update_fields = `
  UPDATE issues SET title = coalesce($2, title), body = coalesce($3, body), labels = coalesce($4, labels),
    assignees = coalesce($5, assignees), updated_at = now()
  WHERE id = $1`;
const issue_close = `
  UPDATE issues SET state = 'closed', close_reason = $2, closed_by = $3, closed_at = now(), updated_at = now()
  WHERE id = $1`;
const issue_reopen = `
  UPDATE issues SET state = 'open', close_reason = NULL, closed_by = NULL, closed_at = NULL, updated_at = now()
  WHERE id = $1`;
const comment_columns =
  "c.id::text, c.issue_id::text, r.name AS repo, c.body, c.author, c.created_at, c.edited_at";
const comment_from =
  "FROM issue_comments c JOIN issues i ON i.id = c.issue_id JOIN repos r ON r.id = i.repo_id";
const comments_select = `SELECT ${comment_columns} ${comment_from} WHERE c.issue_id = $1 ORDER BY c.created_at, c.id`;
const comment_select = `SELECT ${comment_columns} ${comment_from} WHERE c.id = $1`;
// clock_timestamp, not now(): the moment of the insert, so list order is the order of creation.
const comment_insert = `
  INSERT INTO issue_comments (id, issue_id, body, author, created_at) VALUES ($1, $2, $3, $4, clock_timestamp())`;
const comment_lock = `SELECT author FROM issue_comments WHERE id = $1 AND issue_id = $2 FOR UPDATE`;
const comment_update = `UPDATE issue_comments SET body = $2, edited_at = clock_timestamp() WHERE id = $1`;
const comment_delete = `DELETE FROM issue_comments WHERE id = $1`;

const notFound = (access: RepoAccess, number: number): never =>
  fail("ISSUE_NOT_FOUND", `issue #${number} not found in '${access.repo.name}'`);

/** Opens an issue with the repo's next `#n` (shared with proposals); records `issue.opened`. */
export async function openIssue(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  input: OpenIssueRequest,
): Promise<IssueRecord> {
  return withTx(pool, async (tx) => {
    const number = await nextItemNumber(tx, access.repo.id);
    const id = randomUUID();
    await tx.query(issue_insert, [
      id,
      access.repo.id,
      number,
      input.title,
      input.body,
      actor.identity,
      input.labels,
      input.assignees,
    ]);
    await recordEvent(
      tx,
      "com.svc.issue.opened",
      { repo: access.repo.name, issue_id: id, number, author: actor.identity },
      { repo: access.repo.name },
    );
    return getIssue(tx, access, number);
  });
}

/**
 * The repo's issues, newest number first: a page of `limit` (the next is `before` its last
 * number), or every one that matches without it.
 */
export async function listIssues(
  db: Queryable,
  access: RepoAccess,
  q: IssueListQuery,
): Promise<IssueRecord[]> {
  const { rows } = await db.query<IssueRecord>(issue_select_list, [
    access.repo.id,
    q.state === "all" ? null : q.state,
    q.label ?? null,
    q.assignee ?? null,
    q.author ?? null,
    q.before ?? null,
    q.limit ?? null, // LIMIT NULL: every issue, as the origin system lists them
  ]);
  return rows;
}

/** An issue by its `#n`; ISSUE_NOT_FOUND also when `#n` is a proposal's. */
export async function getIssue(db: Queryable, access: RepoAccess, number: number): Promise<IssueRecord> {
  const { rows } = await db.query<IssueRecord>(issue_select_by_number, [access.repo.id, number]);
  return rows[0] ?? notFound(access, number);
}

/** The repo's issues of these numbers, by number; numbers that are no issue are left out. */
export async function issuesNumbered(
  db: Queryable,
  access: RepoAccess,
  numbers: number[],
): Promise<IssueRecord[]> {
  const { rows } = await db.query<IssueRecord>(issues_select_by_numbers, [access.repo.id, numbers]);
  return rows;
}

/**
 * Locks an issue for a change by its author or a maintainer: 404 when it does not exist, 403 for
 * anyone else (the route lets writers in).
 */
async function lockForChange(tx: Tx, actor: Actor, access: RepoAccess, number: number) {
  const { rows } = await tx.query<{ id: string; author: string; state: string }>(issue_lock_by_number, [
    access.repo.id,
    number,
  ]);
  const row = rows[0] ?? notFound(access, number);
  if (row.author !== actor.identity && !atLeast(access.role, "maintainer"))
    fail("FORBIDDEN", "only the issue's author or a maintainer may change it");
  return row;
}

/** Changes an issue's title, body, labels or assignees (closed ones too); records `issue.edited`. */
export async function patchIssue(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  number: number,
  input: PatchIssueRequest,
): Promise<IssueRecord> {
  return withTx(pool, async (tx) => {
    const { id } = await lockForChange(tx, actor, access, number);
    await tx.query(issue_update_fields, [
      id,
      input.title ?? null,
      input.body ?? null,
      input.labels ?? null,
      input.assignees ?? null,
    ]);
    const fields = Object.entries(input)
      .filter(([, v]) => v !== undefined)
      .map(([k]) => k)
      .sort();
    await recordEvent(
      tx,
      "com.svc.issue.edited",
      { repo: access.repo.name, issue_id: id, number, editor: actor.identity, fields },
      { repo: access.repo.name },
    );
    return getIssue(tx, access, number);
  });
}

/** Closes an open issue with a reason (409 ISSUE_NOT_OPEN when closed); records `issue.closed`. */
export async function closeIssue(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  number: number,
  reason: CloseReason,
): Promise<IssueRecord> {
  return withTx(pool, async (tx) => {
    const row = await lockForChange(tx, actor, access, number);
    if (row.state !== "open") fail("ISSUE_NOT_OPEN", `issue #${number} is already closed`);
    await tx.query(issue_close, [row.id, reason, actor.identity]);
    await recordEvent(
      tx,
      "com.svc.issue.closed",
      { repo: access.repo.name, issue_id: row.id, number, closed_by: actor.identity, reason },
      { repo: access.repo.name },
    );
    return getIssue(tx, access, number);
  });
}

/** Reopens a closed issue (409 ISSUE_NOT_CLOSED when open); records `issue.reopened`. */
export async function reopenIssue(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  number: number,
): Promise<IssueRecord> {
  return withTx(pool, async (tx) => {
    const row = await lockForChange(tx, actor, access, number);
    if (row.state !== "closed") fail("ISSUE_NOT_CLOSED", `issue #${number} is open`);
    await tx.query(issue_reopen, [row.id]);
    await recordEvent(
      tx,
      "com.svc.issue.reopened",
      { repo: access.repo.name, issue_id: row.id, number, reopened_by: actor.identity },
      { repo: access.repo.name },
    );
    return getIssue(tx, access, number);
  });
}

/** The issue's comments, oldest first. */
export async function listIssueComments(
  db: Queryable,
  access: RepoAccess,
  number: number,
): Promise<IssueCommentRecord[]> {
  const issue = await getIssue(db, access, number);
  const { rows } = await db.query<IssueCommentRecord>(comments_select, [issue.id]);
  return rows;
}

/** Comments on an issue, open or closed; records `issue_comment.created`. */
export async function addIssueComment(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  number: number,
  input: IssueCommentRequest,
): Promise<IssueCommentRecord> {
  return withTx(pool, async (tx) => {
    // FOR UPDATE on the issue is not needed: the foreign key keeps it while the comment is added.
    const issue = await getIssue(tx, access, number);
    const id = randomUUID();
    await tx.query(comment_insert, [id, issue.id, input.body, actor.identity]);
    await recordEvent(
      tx,
      "com.svc.issue_comment.created",
      { repo: access.repo.name, issue_id: issue.id, number, comment_id: id, author: actor.identity },
      { repo: access.repo.name },
    );
    return commentById(tx, id);
  });
}

async function commentById(db: Queryable, id: string): Promise<IssueCommentRecord> {
  const { rows } = await db.query<IssueCommentRecord>(comment_select, [id]);
  return rows[0] ?? fail("COMMENT_NOT_FOUND", `comment '${id}' not found`);
}

/**
 * Locks a comment of the issue for a change: its author may edit it; deleting someone else's
 * needs the maintainer role (as for review comments).
 */
async function lockComment(
  tx: Tx,
  actor: Actor,
  access: RepoAccess,
  number: number,
  commentId: string,
  change: "edit" | "delete",
) {
  const issue = await getIssue(tx, access, number);
  const { rows } = await tx.query<{ author: string }>(comment_lock, [commentId, issue.id]);
  const row = rows[0] ?? fail("COMMENT_NOT_FOUND", `comment '${commentId}' not found on issue #${number}`);
  const maintainerMay = change === "delete" && atLeast(access.role, "maintainer");
  if (row.author !== actor.identity && !maintainerMay)
    fail(
      "FORBIDDEN",
      `only the comment's author${change === "delete" ? " or a maintainer" : ""} may ${change} it`,
    );
  return { issue, author: row.author };
}

/** Edits one's own comment; records `issue_comment.edited`. */
export async function editIssueComment(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  number: number,
  commentId: string,
  input: IssueCommentRequest,
): Promise<IssueCommentRecord> {
  return withTx(pool, async (tx) => {
    const { issue, author } = await lockComment(tx, actor, access, number, commentId, "edit");
    await tx.query(comment_update, [commentId, input.body]);
    await recordEvent(
      tx,
      "com.svc.issue_comment.edited",
      { repo: access.repo.name, issue_id: issue.id, number, comment_id: commentId, author },
      { repo: access.repo.name },
    );
    return commentById(tx, commentId);
  });
}

/** Deletes a comment (its author, or a maintainer); records `issue_comment.deleted`. */
export async function deleteIssueComment(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  number: number,
  commentId: string,
): Promise<void> {
  await withTx(pool, async (tx) => {
    const { issue, author } = await lockComment(tx, actor, access, number, commentId, "delete");
    await tx.query(comment_delete, [commentId]);
    await recordEvent(
      tx,
      "com.svc.issue_comment.deleted",
      {
        repo: access.repo.name,
        issue_id: issue.id,
        number,
        comment_id: commentId,
        author,
        deleted_by: actor.identity,
      },
      { repo: access.repo.name },
    );
  });
}
