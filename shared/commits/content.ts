import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import path from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { BlobStore } from "../blobs/store.ts";
import { prepared, type Queryable } from "../db/pool.ts";
import type { Tx } from "../db/tx.ts";
import type { DecodedBytes, DecodedContents } from "../http/large-json.ts";
import { isSearchable } from "../search/search.ts";

/** A file body ready to store: its bytes, SHA-256 and how it is classified. */
export interface Body {
  data: Buffer;
  sha256: Buffer;
  contentType: string;
  binary: boolean;
}

const byExtension: Record<string, string> = {
  ".md": "text/markdown; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".json": "application/json",
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".rego": "text/plain; charset=utf-8",
  ".csv": "text/csv; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".xml": "application/xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".pdf": "application/pdf",
};

/**
 * Binary, as git decides it: a NUL byte in the first 8,000 bytes, or bytes that are not UTF-8.
 * Text files get a unified diff; binary files do not. `isUtf8` checks in place (a strict
 * TextDecoder would build a string as large as the file only to throw it away).
 */
export function isBinary(data: Buffer): boolean {
  return data.subarray(0, 8000).includes(0) || !isUtf8(data);
}

/** The client's content type, else one from the file extension, else text or octet-stream by content. */
export function contentTypeFor(filePath: string, binary: boolean, given?: string): string {
  if (given) return given;
  return (
    byExtension[path.extname(filePath).toLowerCase()] ??
    (binary ? "application/octet-stream" : "text/plain; charset=utf-8")
  );
}

/** Base64 characters decoded per step: a multiple of 4, 3 MiB of bytes. */
const DECODE_STEP_CHARS = 4 * 1024 * 1024;

/**
 * A body from its (validated) base64, decoded and hashed a few MiB at a time with other requests
 * served between the steps: decoding a 24 MiB file in one go held the event loop for as long as
 * the whole of it took. A body of one step (most) is decoded without yielding.
 */
async function bodyFromBase64(filePath: string, base64: string, contentType?: string): Promise<Body> {
  const data = Buffer.allocUnsafe((base64.length / 4) * 3);
  const hash = createHash("sha256");
  let length = 0;
  for (let at = 0; at < base64.length; at += DECODE_STEP_CHARS) {
    if (at > 0) await yieldToEventLoop();
    const written = data.write(base64.slice(at, at + DECODE_STEP_CHARS), length, "base64");
    hash.update(data.subarray(length, length + written));
    length += written;
  }
  // Only the bytes written: padding makes the decoded length up to 2 bytes shorter than allocated.
  return classified(filePath, { data: data.subarray(0, length), sha256: hash.digest() }, contentType);
}

/**
 * A file change's body: the bytes `decoded` holds for its content when it is a placeholder of a
 * value decoded as the request was parsed (shared/http/large-json.ts), else decoded from `base64`.
 */
export async function bodyOfContent(
  filePath: string,
  base64: string,
  contentType: string | undefined,
  decoded: DecodedContents,
): Promise<Body> {
  const done = decoded.get(base64);
  return done ? classified(filePath, done, contentType) : bodyFromBase64(filePath, base64, contentType);
}

/** Decoded bytes with their hash, classified as binary or text, and their content type. */
function classified(filePath: string, bytes: DecodedBytes, contentType?: string): Body {
  const binary = isBinary(bytes.data);
  return { ...bytes, binary, contentType: contentTypeFor(filePath, binary, contentType) };
}

/** The blob store key of a body: content-addressed within its repo. */
export const blobKey = (repoId: number, sha256: Buffer) => `repos/${repoId}/${sha256.toString("hex")}`;

// The bytes of the bodies stored inline or indexed for search go as one bytea ($4), each at its
// offset ($7; null for a body sent as neither): bytea[] and text[] parameters are sent as text, so
// a 500-file commit of 4 KiB files became 4 MiB of hex and 2 MiB of escaped text on top of its
// bytes (docs/benchmarks.md, "Where the memory goes"); one bytea parameter goes as it is. The text
// of each searchable body ($6) is indexed for search in the same statement (docs/search.md): one
// round trip, not two; it is UTF-8 (isSearchable), so convert_from reads it as Node would. The
// foreign key of search_texts is checked at the end of the statement, when the contents rows are there.
const content_insert_batch = prepared(
  "content_insert_batch",
  `
  WITH sent AS (
    SELECT s.sha256, s.size, s.blob_key, s.searchable,
      CASE WHEN s.at IS NOT NULL THEN substring($4::bytea FROM s.at + 1 FOR s.size::int) END AS data
    FROM unnest($2::bytea[], $3::bigint[], $5::text[], $6::boolean[], $7::int[])
      AS s (sha256, size, blob_key, searchable, at)
  ), stored AS (
    INSERT INTO contents (repo_id, sha256, size, data, blob_key)
    SELECT $1, sha256, size, CASE WHEN blob_key IS NULL THEN data END, blob_key FROM sent
    ON CONFLICT (repo_id, sha256) DO UPDATE SET size = excluded.size
  )
  INSERT INTO search_texts (repo_id, sha256, body)
  SELECT $1, sha256, convert_from(data, 'UTF8') FROM sent WHERE searchable
  ON CONFLICT (repo_id, sha256) DO NOTHING`,
);

/**
 * Puts bodies above `threshold` bytes into the blob store. Run it before the transaction: keys are
 * content hashes, so a blob left behind by a rolled-back commit is harmless and is reused by the
 * next commit of the same bytes.
 */
export async function uploadLargeBodies(
  blobs: BlobStore,
  repoId: number,
  bodies: Body[],
  threshold: number,
): Promise<void> {
  const large = bodies.filter((b) => b.data.length > threshold);
  await Promise.all(large.map((b) => blobs.put(blobKey(repoId, b.sha256), b.data)));
}

/**
 * Records the bodies (inline, or by blob key above the threshold); identical bytes are stored once,
 * and the text of each is indexed for search (`isSearchable`).
 * A body that is already stored is updated in place (to itself) so that its row is locked until
 * this commit ends: purge skips locked rows, so it cannot remove content a commit is about to use.
 */
export async function insertBodies(tx: Tx, repoId: number, bodies: Body[], threshold: number): Promise<void> {
  // One row per distinct body (an upsert may not touch a row twice in one statement), in hash
  // order, so that two commits sharing bodies lock their rows in the same order and cannot deadlock.
  const distinct = [...new Map(bodies.map((b) => [b.sha256.toString("hex"), b])).values()].sort((a, b) =>
    a.sha256.compare(b.sha256),
  );
  if (distinct.length === 0) return;
  const large = (b: Body) => b.data.length > threshold;
  const searchable = distinct.map(isSearchable);
  const sent = distinct.map((b, i) => !large(b) || searchable[i]);
  let at = 0;
  const offsets = distinct.map((b, i) => {
    if (!sent[i]) return null;
    at += b.data.length;
    return at - b.data.length;
  });
  await tx.query(
    content_insert_batch([
      repoId,
      distinct.map((b) => b.sha256),
      distinct.map((b) => b.data.length),
      Buffer.concat(distinct.filter((_, i) => sent[i]).map((b) => b.data)),
      distinct.map((b) => (large(b) ? blobKey(repoId, b.sha256) : null)),
      searchable,
      offsets,
    ]),
  );
}

const content_select = `SELECT data, blob_key FROM contents WHERE repo_id = $1 AND sha256 = $2`;
/** A body is kept in its row or, above the threshold, in the blob store. */
type StoredContent = { data: Buffer; blob_key: null } | { data: null; blob_key: string };

/** The bytes of a stored version, from the row or from the blob store. */
export async function loadBody(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  sha256: Buffer,
): Promise<Buffer> {
  const { rows } = await db.query<StoredContent>(content_select, [repoId, sha256]);
  const row = rows[0];
  if (!row) throw new Error(`content ${sha256.toString("hex")} is missing from repo ${repoId}`);
  return row.data !== null ? row.data : await blobs.get(row.blob_key);
}

const content_select_up_to = `
  SELECT size, CASE WHEN size <= $3 THEN data END AS data, CASE WHEN size <= $3 THEN blob_key END AS blob_key
  FROM contents WHERE repo_id = $1 AND sha256 = $2`;

/**
 * The bytes of a stored version if it is at most `maxBytes` long, else null, decided by the row's
 * size before any bytes are read (a blob above the limit is not fetched at all).
 */
export async function loadBodyUpTo(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  sha256: Buffer,
  maxBytes: number,
): Promise<Buffer | null> {
  return (await loadSizedBodyUpTo(db, blobs, repoId, sha256, maxBytes)).data;
}

/** As `loadBodyUpTo`, with the version's size in bytes (shown when the bytes are not). */
export async function loadSizedBodyUpTo(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  sha256: Buffer,
  maxBytes: number,
): Promise<{ size: number; data: Buffer | null }> {
  const { rows } = await db.query(content_select_up_to, [repoId, sha256, maxBytes]);
  const row = rows[0];
  if (!row) throw new Error(`content ${sha256.toString("hex")} is missing from repo ${repoId}`);
  const size = Number(row.size);
  if (size > maxBytes) return { size, data: null };
  return { size, data: row.data ?? (await blobs.get(row.blob_key)) };
}

/** version_id is the hex SHA-256 of the content; null for a deletion. */
export function versionId(sha256: Buffer): string;
export function versionId(sha256: Buffer | null): string | null;
export function versionId(sha256: Buffer | null): string | null {
  return sha256 ? sha256.toString("hex") : null;
}
