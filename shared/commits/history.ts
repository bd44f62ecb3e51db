import type { RepoAccess } from "../access/roles.ts";
import type { Queryable } from "../db/pool.ts";
import { resolveView } from "./view.ts";

/**
 * A page of a repo's commits, newest first, before `$2`: all of them, or (`$3` not null) those a
 * branch's view holds (its own commits from the epoch's start up to its head, laid over main's up
 * to its base), and (`$8` not null) only those that changed the file `$8` or a path under the
 * folder `$8`. The commits are walked backwards on their primary key; the path test is one probe of
 * file_changes_by_commit per commit, so a page costs about the commits read to fill it (a path
 * changed once in 10,000 commits reads them all: bounded by the repo's history, never by its size).
 */
const history_select = `
  SELECT c.sequence, b.name AS branch, c.author, c.message, c.created_at
  FROM commits c JOIN branches b ON b.id = c.branch_id
  WHERE c.repo_id = $1 AND c.sequence < $2
    AND ($3::bigint IS NULL OR (c.branch_id = $3 AND c.sequence BETWEEN $4 AND $5)
         OR (c.branch_id = $6 AND c.sequence <= $7))
    AND ($8::text IS NULL OR EXISTS (
      SELECT 1 FROM file_changes f WHERE f.repo_id = c.repo_id AND f.sequence = c.sequence
        AND (f.path = $8::text OR (f.path >= $8::text || '/' AND f.path < $8::text || '0'))))
  ORDER BY c.sequence DESC
  LIMIT $9`;

export interface HistoryEntry {
  sequence: number;
  branch: string;
  author: string;
  message: string;
  created_at: Date;
}

/**
 * The repo's commits newest first, `limit` at a time (`before`: the last sequence of the previous
 * page), optionally only those in a branch's view and those that touched a file or folder.
 */
export async function readHistory(
  db: Queryable,
  access: RepoAccess,
  q: { branch?: string | undefined; path?: string | undefined; before?: number | undefined; limit: number },
): Promise<HistoryEntry[]> {
  const view = q.branch === undefined ? null : await resolveView(db, access.repo.id, q.branch, undefined);
  const { rows } = await db.query<HistoryEntry>(history_select, [
    access.repo.id,
    q.before ?? Number.MAX_SAFE_INTEGER,
    view?.branch.id ?? null,
    view?.ownFrom ?? 0,
    view?.at ?? 0,
    view?.parentId ?? null,
    view?.parentAt ?? 0,
    q.path ?? null,
    q.limit,
  ]);
  return rows;
}
