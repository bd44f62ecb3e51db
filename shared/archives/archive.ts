import { PassThrough, pipeline, Readable, type Writable } from "node:stream";
import { createGzip } from "node:zlib";
import { pack as tarPack } from "tar-stream";
import type { RepoRow } from "../access/roles.ts";
import { filePathProblem } from "../api/path-rules.ts";
import { MAIN } from "../branches/branches.ts";
import { resolveView, treePageArgs, type View } from "../commits/view.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import type { Logger } from "../log.ts";

/**
 * A `.tar.gz` of the tree at one view, streamed in bounded memory. See docs/archives.md.
 *
 * Memory: one page of tree metadata (ARCHIVE_PAGE_SIZE paths), one batch of inline bodies (at most
 * INLINE_BATCH_BYTES, or a single body when one is larger), the body being written, and the stream
 * buffers between the tar encoder and the socket (a few tens of KiB). Nothing grows with the
 * number of files. Every stage waits for the next to drain, so a slow client slows the walk down
 * instead of piling bytes up. No database connection is held between queries.
 */

/** Paths read per tree_page call. */
export const ARCHIVE_PAGE_SIZE = 500;
/** Inline bodies (stored in the `contents` row) are fetched in batches of at most this many bytes... */
export const INLINE_BATCH_BYTES = 4 * 1024 * 1024;
/** ...and at most this many files. */
export const INLINE_BATCH_FILES = 200;
/** Bytes buffered between the tar encoder and gzip, and between gzip and the response. */
const STREAM_BUFFER_BYTES = 64 * 1024;
/** Regular files only, rw-r--r--. */
const FILE_MODE = 0o644;

/** Everything decided before the first byte is sent: a bad branch or `at` fails here, as JSON. */
export interface ArchivePlan {
  repo: RepoRow;
  view: View;
  /** The one folder every entry is under, `<repo's last segment>[-<branch>]-<at>`. */
  topFolder: string;
  /** `<topFolder>.tar.gz`. */
  fileName: string;
  /** Every entry's mtime: when commit `at` was made (the Unix epoch for at = 0), whole seconds. */
  mtime: Date;
}

const commit_time_select = `SELECT created_at FROM commits WHERE repo_id = $1 AND sequence = $2`;

/**
 * Resolves (branch, at) to a view and fixes the archive's names and mtime. Throws BRANCH_NOT_FOUND
 * or SEQUENCE_OUT_OF_RANGE, so callers run it before they start a response.
 */
export async function planArchive(
  db: Queryable,
  repo: RepoRow,
  branch: string,
  at: number | undefined,
): Promise<ArchivePlan> {
  const view = await resolveView(db, repo.id, branch, at);
  const { rows } = await db.query(commit_time_select, [repo.id, view.at]);
  const created = rows[0]?.created_at as Date | undefined;
  const mtime = new Date(created ? Math.floor(created.getTime() / 1000) * 1000 : 0);
  const topFolder = archiveFolderName(repo.name, view.branch.name, view.at);
  return { repo, view, topFolder, fileName: `${topFolder}.tar.gz`, mtime };
}

/**
 * `docs-12` for main of `acme/docs` at 12; `docs-feature-x-12` for branch `feature/x`. Repo and
 * branch names use only letters, digits, `.`, `_`, `-` and `/`, so the result is a safe file name
 * (and a safe quoted Content-Disposition value).
 */
export function archiveFolderName(repo: string, branch: string, at: number): string {
  const last = repo.slice(repo.lastIndexOf("/") + 1);
  const middle = branch === MAIN ? "" : `-${branch.replaceAll("/", "-")}`;
  return `${last}${middle}-${at}`;
}

/** The response headers of an archive. */
export function archiveHeaders(plan: ArchivePlan): Record<string, string> {
  return {
    "content-type": "application/gzip",
    "content-disposition": `attachment; filename="${plan.fileName}"`,
    "cache-control": "private, no-store",
    "x-content-type-options": "nosniff",
  };
}

/**
 * The archive's bytes. Piped into a response, it also watches that response: when the client goes
 * away before the end it destroys itself, which tears down gzip and the tar encoder and stops the
 * walk (a plain `pipe` would only unpipe and leave the producer waiting forever).
 */
class ArchiveBody extends PassThrough {
  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    (destination as unknown as Writable).once("close", () => {
      if (!this.readableEnded && !this.destroyed) this.destroy(new ClientGone());
    });
    return super.pipe(destination, options);
  }
}

class ClientGone extends Error {
  constructor() {
    super("the client closed the connection before the archive was complete");
    this.name = "ClientGone";
  }
}

/** One tree entry with where its bytes are. */
interface PageEntry {
  path: string;
  sha256: Buffer;
  size: number | null;
  blobKey: string | null;
}

// A page of the tree with each entry's content row (size, and where the bytes live), in path
// order. The LATERAL ... LIMIT 1 keeps it one primary-key probe per entry: as a plain join the
// planner may hash the repo's whole contents table for every page. LEFT, so that a missing
// content row is noticed rather than silently skipped.
const page_select = `
  SELECT t.path, t.content_sha256, c.size, c.blob_key
  FROM tree_page($1, $2, $3, $4, $5, $6, $7) WITH ORDINALITY AS t (path, content_sha256, content_type, is_binary, n)
  LEFT JOIN LATERAL (
    SELECT size, blob_key FROM contents WHERE repo_id = $8 AND sha256 = t.content_sha256 LIMIT 1) c ON true
  ORDER BY t.n`;
const inline_select = `SELECT sha256, data FROM contents WHERE repo_id = $1 AND sha256 = ANY($2::bytea[]) AND data IS NOT NULL`;

async function treePage(db: Queryable, repoId: number, view: View, after: string): Promise<PageEntry[]> {
  const { rows } = await db.query(page_select, [...treePageArgs(view, after, ARCHIVE_PAGE_SIZE), repoId]);
  return rows.map((r) => ({
    path: r.path,
    sha256: r.content_sha256,
    size: r.size === null ? null : Number(r.size),
    blobKey: r.blob_key,
  }));
}

/** Splits a page into runs to load together: consecutive inline bodies up to the batch limits, each blob alone. */
function batchesOf(page: PageEntry[]): PageEntry[][] {
  const batches: PageEntry[][] = [];
  let current: PageEntry[] = [];
  let bytes = 0;
  const close = () => {
    if (current.length > 0) batches.push(current);
    current = [];
    bytes = 0;
  };
  for (const e of page) {
    if (e.blobKey !== null) {
      close();
      batches.push([e]);
      continue;
    }
    // A missing content row (size null) counts as empty here; writeTree reports it.
    const size = e.size ?? 0;
    if (current.length > 0 && (bytes + size > INLINE_BATCH_BYTES || current.length >= INLINE_BATCH_FILES))
      close();
    current.push(e);
    bytes += size;
  }
  close();
  return batches;
}

/** The bytes of one batch, by hex SHA-256. */
async function loadBatch(ctx: AppContext, repoId: number, batch: PageEntry[]): Promise<Map<string, Buffer>> {
  const [first] = batch;
  if (first === undefined) return new Map();
  if (first.blobKey !== null)
    return new Map([[first.sha256.toString("hex"), await ctx.blobs.get(first.blobKey)]]);
  const unique = [...new Map(batch.map((e) => [e.sha256.toString("hex"), e.sha256])).values()];
  const { rows } = await ctx.pool.query(inline_select, [repoId, unique]);
  return new Map(rows.map((r) => [(r.sha256 as Buffer).toString("hex"), r.data as Buffer]));
}

type Pack = ReturnType<typeof tarPack>;

/** Adds one regular file and resolves when the encoder has taken its bytes (its buffer drained). */
function addFile(pack: Pack, name: string, mtime: Date, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const entry = pack.entry(
      { name, type: "file", mode: FILE_MODE, mtime, uid: 0, gid: 0, uname: "", gname: "", size: data.length },
      data,
      (err) => (err ? reject(err) : resolve()),
    );
    // When the encoder is torn down mid-entry the entry re-emits the cause; the callback has it.
    entry.on("error", () => {});
  });
}

export interface ArchiveStats {
  files: number;
  bytes: number;
}

/** Walks the view page by page and writes each file to `pack`, then finalizes it. */
async function writeTree(ctx: AppContext, plan: ArchivePlan, pack: Pack, stats: ArchiveStats): Promise<void> {
  const repoId = plan.repo.id;
  let after = "";
  for (;;) {
    const page = await treePage(ctx.pool, repoId, plan.view, after);
    for (const batch of batchesOf(page)) {
      const bodies = await loadBatch(ctx, repoId, batch);
      for (const e of batch) {
        const data = bodies.get(e.sha256.toString("hex"));
        if (e.size === null || data === undefined)
          throw new Error(
            `content ${e.sha256.toString("hex")} of '${e.path}' is missing from repo ${repoId}`,
          );
        // Paths were validated when committed; refuse anything that could escape the top folder anyway.
        const problem = filePathProblem(e.path);
        if (problem) throw new Error(`refusing to archive the path '${e.path}': it ${problem}`);
        await addFile(pack, `${plan.topFolder}/${e.path}`, plan.mtime, data);
        stats.files++;
        stats.bytes += data.length;
      }
    }
    const last = page.at(-1);
    if (last === undefined || page.length < ARCHIVE_PAGE_SIZE) break;
    after = last.path;
  }
  pack.finalize();
}

/**
 * Starts streaming the archive of `plan` and returns its bytes. A failure after this point (a body
 * that cannot be loaded, the database going away) cannot become an error response any more: the
 * stream is destroyed, so the client sees a truncated download, and the cause is logged.
 */
export function archiveStream(ctx: AppContext, plan: ArchivePlan, log: Logger): Readable {
  const started = process.hrtime.bigint();
  const stats: ArchiveStats = { files: 0, bytes: 0 };
  const pack = tarPack();
  // No file name and mtime 0 in the gzip header, so equal trees give equal bytes.
  const gzip = createGzip({ level: 6 });
  const body = new ArchiveBody({ highWaterMark: STREAM_BUFFER_BYTES });
  const fields = {
    repo: plan.repo.name,
    branch: plan.view.branch.name,
    at: plan.view.at,
  };
  let failed = false;
  const fail = (err: unknown) => {
    if (failed) return;
    failed = true;
    const done = { ...fields, ...stats, duration_ms: elapsedMs(started) };
    if (err instanceof ClientGone) log.info(done, "archive download aborted by the client");
    else log.error({ ...done, err }, "archive stream failed; the download is truncated");
    if (!body.destroyed) body.destroy(err instanceof Error ? err : new Error(String(err)));
    if (!pack.destroyed) pack.destroy();
  };
  // The tar encoder is a streamx stream: read it through its async iterator, which respects its
  // backpressure, as a byte stream (not object mode, whose buffer counts chunks, not bytes).
  const tarBytes = Readable.from(pack, { objectMode: false, highWaterMark: STREAM_BUFFER_BYTES });
  // Tearing the pipeline down destroys the encoder with the cause, which it re-emits; `fail` has
  // already handled that cause (the pipeline and the pending entry both report it).
  pack.on("error", () => {});
  pipeline(tarBytes, gzip, body, (err) => {
    if (err) fail(err);
    else log.info({ ...fields, ...stats, duration_ms: elapsedMs(started) }, "archive streamed");
  });
  writeTree(ctx, plan, pack, stats).catch(fail);
  return body;
}

function elapsedMs(started: bigint): number {
  return Number((process.hrtime.bigint() - started) / 1000n) / 1000;
}
