import type { RepoAccess } from "../access/roles.ts";
import type { AppContext } from "../context.ts";
import { prepared } from "../db/pool.ts";
import { fail } from "../errors.ts";
import { ok, type Reply } from "../http/route.ts";
import { loadBody, versionId } from "./content.ts";
import { fileJsonStream, STREAM_FILE_ABOVE_BYTES } from "./file-stream.ts";
import { ENTRY_OVERHEAD, viewKey } from "./reads.ts";
import { type FileVersion, newest_change_in_view, resolveAccessView, type View, viewParams } from "./view.ts";

/** Bodies up to this size are kept as their base64 in the read cache. */
const CACHE_BODY_MAX_BYTES = 64 * 1024;

// A path's version in a view and, in the same round trip, its stored body (inline bytes, or the
// blob key of a large one): a file read that misses the cache costs one statement after access.
const file_with_body_in_view = prepared<FileVersion & { data: Buffer | null; blob_key: string | null }>(
  "file_with_body_in_view",
  `
  SELECT v.content_sha256, v.content_type, v.is_binary, c.data, c.blob_key
  FROM (SELECT $5::text AS path) p CROSS JOIN ${newest_change_in_view}
  LEFT JOIN contents c ON c.repo_id = $7 AND c.sha256 = v.content_sha256
  WHERE v.content_sha256 IS NOT NULL`,
);

/** What a file read knows once it has the version: the body too, unless it is large or cached. */
interface Found {
  version: FileVersion | null;
  body?: Buffer | undefined;
}

const versionKey = (view: View, path: string) => `file:${viewKey(view)}:${path}`;
const bodyKey = (repoId: number, version: string) => `body:${repoId}:${version}`;
const versionBytes = (path: string, v: FileVersion | null) =>
  2 * path.length + (v ? 2 * v.content_type.length : 0) + ENTRY_OVERHEAD;

/**
 * The file the access statement read, if it read it in this very view: at the same `at`, and on
 * a branch with the epoch viewOf used (the one at the head applies from its `from_at` on).
 */
function fileOfView(access: RepoAccess, view: View, path: string): Found | undefined {
  const known = access.branch;
  const file = known?.file;
  if (!known || !file || file.path !== path || file.at !== view.at || known.row?.id !== view.branch.id)
    return undefined;
  if (view.parentId !== null && !(known.epoch && known.epoch.from_at <= view.at)) return undefined;
  return { version: file.version, body: file.data ?? undefined };
}

/** The version of `path` in `view` (cached: it never changes), with its body when that was read too. */
async function findVersion(
  ctx: Pick<AppContext, "pool" | "reads" | "blobs">,
  view: View,
  path: string,
  repoId: number,
): Promise<Found> {
  const key = versionKey(view, path);
  const known = ctx.reads.get<FileVersion | null>(key);
  if (known !== undefined) return { version: known };
  const { rows } = await ctx.pool.query(file_with_body_in_view([...viewParams(view, path), repoId]));
  const row = rows[0];
  const version = row
    ? { content_sha256: row.content_sha256, content_type: row.content_type, is_binary: row.is_binary }
    : null;
  ctx.reads.set(key, version, versionBytes(path, version));
  if (!row) return { version };
  return { version, body: row.data ?? (row.blob_key ? await ctx.blobs.get(row.blob_key) : undefined) };
}

/**
 * A file at (branch, at), with its content in base64; FILE_NOT_FOUND when absent there. A body
 * above STREAM_FILE_ABOVE_BYTES is sent as the same JSON, streamed (fileJsonStream). Versions and
 * small bodies come from the read cache when this process has read them before.
 */
export async function readFile(
  ctx: AppContext,
  access: RepoAccess,
  q: { path: string; branch: string; at?: number },
): Promise<Reply> {
  const view = await resolveAccessView(ctx.pool, access, q.branch, q.at);
  const prefetched = fileOfView(access, view, q.path);
  const { version, body } = prefetched ?? (await findVersion(ctx, view, q.path, access.repo.id));
  if (!version) fail("FILE_NOT_FOUND", `'${q.path}' does not exist on '${q.branch}' at ${view.at}`);
  const meta = { content_type: version.content_type, version_id: versionId(version.content_sha256) };
  const key = bodyKey(access.repo.id, meta.version_id);
  let content = body === undefined ? ctx.reads.get<string>(key) : undefined;
  if (content === undefined) {
    const data = body ?? (await loadBody(ctx.pool, ctx.blobs, access.repo.id, version.content_sha256));
    if (data.length > STREAM_FILE_ABOVE_BYTES) return fileJsonStream(q.path, data, meta);
    content = data.toString("base64");
    if (data.length <= CACHE_BODY_MAX_BYTES) ctx.reads.set(key, content, 2 * content.length + ENTRY_OVERHEAD);
  }
  return ok({ path: q.path, content, ...meta });
}
