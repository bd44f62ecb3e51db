import type { RepoAccess } from "../access/roles.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import { fail } from "../errors.ts";
import { ok, type Reply } from "../http/route.ts";
import { loadBody, versionId } from "./content.ts";
import { fileJsonStream, STREAM_FILE_ABOVE_BYTES } from "./file-stream.ts";
import { type FileVersion, fileInView, resolveView, treePageArgs, type View } from "./view.ts";

export interface TreeEntry {
  path: string;
  version_id: string;
  content_type: string;
  binary: boolean;
}

const tree_page_select = `SELECT path, content_sha256, content_type, is_binary FROM tree_page($1, $2, $3, $4, $5, $6, $7)`;
interface TreePageRow extends FileVersion {
  path: string;
}

/**
 * One page of the tree at (branch, at), paths after `after` in byte order, with the branch's head
 * sequence at the moment of the read (its ETag).
 */
export async function readTreePage(
  db: Queryable,
  access: RepoAccess,
  q: { branch: string; at?: number | undefined; after?: string | undefined; limit: number },
): Promise<{ entries: TreeEntry[]; head: number }> {
  const view = await resolveView(db, access.repo.id, q.branch, q.at);
  return { entries: await readTreeInView(db, view, q), head: view.branch.head_sequence };
}

/** A page of the tree in a view already resolved (a page that shows the view reads it once). */
export async function readTreeInView(
  db: Queryable,
  view: View,
  q: { after?: string | undefined; limit: number },
): Promise<TreeEntry[]> {
  const { rows } = await db.query<TreePageRow>(tree_page_select, treePageArgs(view, q.after ?? "", q.limit));
  return rows.map((r) => ({
    path: r.path,
    version_id: versionId(r.content_sha256),
    content_type: r.content_type,
    binary: r.is_binary,
  }));
}

/**
 * A file at (branch, at), with its content in base64; FILE_NOT_FOUND when absent there. A body
 * above STREAM_FILE_ABOVE_BYTES is sent as the same JSON, streamed (fileJsonStream).
 */
export async function readFile(
  ctx: AppContext,
  access: RepoAccess,
  q: { path: string; branch: string; at?: number },
): Promise<Reply> {
  const view = await resolveView(ctx.pool, access.repo.id, q.branch, q.at);
  const version = await fileInView(ctx.pool, view, q.path);
  if (!version) fail("FILE_NOT_FOUND", `'${q.path}' does not exist on '${q.branch}' at ${view.at}`);
  const data = await loadBody(ctx.pool, ctx.blobs, access.repo.id, version.content_sha256);
  const meta = { content_type: version.content_type, version_id: versionId(version.content_sha256) };
  if (data.length > STREAM_FILE_ABOVE_BYTES) return fileJsonStream(q.path, data, meta);
  return ok({ path: q.path, content: data.toString("base64"), ...meta });
}

// The commits that changed a path, newest first: the branch's own (all above its base), then
// main's up to the base. `after` is the sequence of the last entry of the previous page.
const file_history_select = `
  SELECT f.sequence, b.name AS branch, f.content_sha256, c.author, c.message, c.created_at
  FROM file_changes f
  JOIN commits c ON c.repo_id = $1 AND c.sequence = f.sequence
  JOIN branches b ON b.id = f.branch_id
  WHERE f.path = $2 AND f.sequence < $7
    AND ((f.branch_id = $3 AND f.sequence BETWEEN $9 AND $4) OR (f.branch_id = $5 AND f.sequence <= $6))
  ORDER BY f.sequence DESC
  LIMIT $8`;

interface FileHistoryRow {
  sequence: number;
  branch: string;
  /** Null: the path was deleted. */
  content_sha256: Buffer | null;
  author: string;
  message: string;
  created_at: Date;
}

export async function readFileHistory(
  db: Queryable,
  access: RepoAccess,
  q: { path: string; branch: string; after?: number; limit: number },
) {
  const view = await resolveView(db, access.repo.id, q.branch, undefined);
  const { rows } = await db.query<FileHistoryRow>(file_history_select, [
    access.repo.id,
    q.path,
    view.branch.id,
    view.at,
    view.parentId,
    view.parentAt,
    q.after ?? Number.MAX_SAFE_INTEGER,
    q.limit,
    view.ownFrom,
  ]);
  return rows.map((r) => ({
    sequence: r.sequence,
    branch: r.branch,
    version_id: versionId(r.content_sha256),
    deleted: r.content_sha256 === null,
    author: r.author,
    message: r.message,
    created_at: r.created_at,
  }));
}

const commit_select = `
  SELECT c.sequence, b.name AS branch, c.message, c.author, c.created_at
  FROM commits c JOIN branches b ON b.id = c.branch_id
  WHERE c.repo_id = $1 AND c.sequence = $2`;
const commit_files_select = `
  SELECT path, content_sha256 FROM file_changes WHERE repo_id = $1 AND sequence = $2 ORDER BY path`;

interface CommitRow {
  sequence: number;
  branch: string;
  message: string;
  author: string;
  created_at: Date;
}

/** A commit by sequence, with the path and version of each file it changed (null version: deleted). */
export async function readCommit(db: Queryable, access: RepoAccess, sequence: number) {
  const { rows } = await db.query<CommitRow>(commit_select, [access.repo.id, sequence]);
  const c = rows[0];
  if (!c) fail("COMMIT_NOT_FOUND", `no commit ${sequence} in '${access.repo.name}'`);
  const files = await db.query<{ path: string; content_sha256: Buffer | null }>(commit_files_select, [
    access.repo.id,
    sequence,
  ]);
  return {
    sequence: c.sequence,
    branch: c.branch,
    message: c.message,
    author: c.author,
    created_at: c.created_at,
    files: files.rows.map((f) => ({ path: f.path, version_id: versionId(f.content_sha256) })),
  };
}
