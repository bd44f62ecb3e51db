import { createHash } from "node:crypto";

export interface ChainInput {
  prevHash: string;
  sequence: number;
  repo: string;
  branch: string;
  author: string;
  message: string;
  /** UTC RFC 3339 with fractional seconds, exactly as returned by the chain endpoint. */
  createdAt: string;
  /** Each changed path with the hex SHA-256 of its new content, or "" for a deletion. */
  files: { path: string; sha256: string }[];
}

/** Orders paths by their UTF-8 bytes (the database's "C" collation), not by UTF-16 code units. */
export function byPathBytes(a: { path: string }, b: { path: string }): number {
  return Buffer.compare(Buffer.from(a.path, "utf8"), Buffer.from(b.path, "utf8"));
}

/**
 * A commit's hash: hex SHA-256 of newline-terminated lines — previous hash on the same branch,
 * sequence, repo, branch, author, message, created_at, then `path:content_sha256` per file sorted
 * by path. docs/hash-chain.md shows how a client recomputes it.
 */
export function commitHash(c: ChainInput): string {
  const lines = [c.prevHash, String(c.sequence), c.repo, c.branch, c.author, c.message, c.createdAt];
  for (const f of [...c.files].sort(byPathBytes)) lines.push(`${f.path}:${f.sha256}`);
  return createHash("sha256")
    .update(lines.map((l) => `${l}\n`).join(""))
    .digest("hex");
}
