import { createHash } from "node:crypto";
import path from "node:path";
import type { BlobStore } from "../blobs/store.ts";
import { prepared, type Queryable } from "../db/pool.ts";

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
 * Text files get a unified diff; binary files do not.
 */
export function isBinary(data: Buffer): boolean {
  if (data.subarray(0, 8000).includes(0)) return true;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(data);
    return false;
  } catch {
    return true;
  }
}

/** The client's content type, else one from the file extension, else text or octet-stream by content. */
export function contentTypeFor(filePath: string, binary: boolean, given?: string): string {
  if (given) return given;
  return (
    byExtension[path.extname(filePath).toLowerCase()] ??
    (binary ? "application/octet-stream" : "text/plain; charset=utf-8")
  );
}

export function bodyOf(filePath: string, data: Buffer, contentType?: string): Body {
  const binary = isBinary(data);
  return {
    data,
    sha256: createHash("sha256").update(data).digest(),
    binary,
    contentType: contentTypeFor(filePath, binary, contentType),
  };
}

/** The blob store key of a body: content-addressed within its repo. */
export const blobKey = (repoId: number, sha256: Buffer) => `repos/${repoId}/${sha256.toString("hex")}`;

const content_insert_batch = prepared(
  "content_insert_batch",
  `
  INSERT INTO contents (repo_id, sha256, size, data, blob_key)
  SELECT $1, s.sha256, s.size, s.data, s.blob_key
  FROM unnest($2::bytea[], $3::bigint[], $4::bytea[], $5::text[]) AS s (sha256, size, data, blob_key)
  ON CONFLICT (repo_id, sha256) DO UPDATE SET size = excluded.size`,
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
 * Records the bodies (inline, or by blob key above the threshold); identical bytes are stored once.
 * A body that is already stored is updated in place (to itself) so that its row is locked until
 * this commit ends: purge skips locked rows, so it cannot remove content a commit is about to use.
 */
export async function insertBodies(
  tx: Queryable,
  repoId: number,
  bodies: Body[],
  threshold: number,
): Promise<void> {
  // One row per distinct body (an upsert may not touch a row twice in one statement), in hash
  // order, so that two commits sharing bodies lock their rows in the same order and cannot deadlock.
  const distinct = [...new Map(bodies.map((b) => [b.sha256.toString("hex"), b])).values()].sort((a, b) =>
    a.sha256.compare(b.sha256),
  );
  if (distinct.length === 0) return;
  const large = (b: Body) => b.data.length > threshold;
  await tx.query(
    content_insert_batch([
      repoId,
      distinct.map((b) => b.sha256),
      distinct.map((b) => b.data.length),
      distinct.map((b) => (large(b) ? null : b.data)),
      distinct.map((b) => (large(b) ? blobKey(repoId, b.sha256) : null)),
    ]),
  );
}

const content_select = `SELECT data, blob_key FROM contents WHERE repo_id = $1 AND sha256 = $2`;

/** The bytes of a stored version, from the row or from the blob store. */
export async function loadBody(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  sha256: Buffer,
): Promise<Buffer> {
  const { rows } = await db.query(content_select, [repoId, sha256]);
  const row = rows[0];
  if (!row) throw new Error(`content ${sha256.toString("hex")} is missing from repo ${repoId}`);
  return row.data ?? (await blobs.get(row.blob_key));
}

/** version_id is the hex SHA-256 of the content; null for a deletion. */
export const versionId = (sha256: Buffer | null) => (sha256 ? sha256.toString("hex") : null);
