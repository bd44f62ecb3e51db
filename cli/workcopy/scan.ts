import { createHash } from "node:crypto";
import { lstatSync, readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { hasReservedSegment } from "../../shared/api/path-rules.ts";
import { byPathBytes } from "../../shared/commits/hash.ts";
import type { CopyIndex, IndexEntry } from "./meta.ts";

/** One path whose local bytes differ from the copy's sequence. */
export interface LocalChange {
  path: string;
  status: "added" | "modified" | "deleted";
  /** The local content's SHA-256 (absent for a deletion). */
  sha256?: string;
}

export interface ScanResult {
  /** In byte order of path, as the server orders paths. */
  changes: LocalChange[];
  /** Every local file with its hash, size and mtime: the index as it would be if committed. */
  local: Map<string, IndexEntry>;
  /** How many files had to be read and hashed (the rest matched the index by size and mtime). */
  hashed: number;
  /** Whether some index entry is worth rewriting (a file hashed whose mtime is now safely old). */
  refreshable: boolean;
}

/**
 * An mtime this close to the moment the index was written may hide a change made in the same
 * clock tick (the "racy clean" case of git); such files are hashed anyway. 2 s covers the
 * coarsest common file system timestamps (FAT).
 */
const RACY_MS = 2000;

export const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * Relative POSIX paths of every regular file under `root`, without any under a `.quire` segment
 * (the copy's own `.quire/`, and any look-alike anywhere: the server refuses to commit them, as git
 * never tracks a `.git`).
 */
export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  for (const e of entries) {
    if (!e.isFile()) continue;
    const rel = path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join("/");
    if (hasReservedSegment(rel)) continue;
    out.push(rel);
  }
  return out;
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function eachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Compares the files under `root` with the index: a file whose size and mtime match its entry
 * (and whose mtime is not racily recent) is taken as unchanged without reading it; every other
 * file is hashed and compared by content, so touching a file without changing it is no change.
 */
export async function scan(root: string, index: CopyIndex): Promise<ScanResult> {
  const paths = await listFiles(root);
  const local = new Map<string, IndexEntry>();
  const changes: LocalChange[] = [];
  let hashed = 0;
  let refreshable = false;
  const now = Date.now();
  // Synchronous on purpose: the CLI has nothing else to do meanwhile, and 10,000 lstat calls
  // straight to the kernel beat 10,000 round trips through libuv's thread pool.
  for (const rel of paths) {
    const abs = path.join(root, rel);
    const st = lstatSync(abs);
    const known = index.files.get(rel);
    if (
      known &&
      known[1] === st.size &&
      known[2] === st.mtimeMs &&
      st.mtimeMs < index.writtenAtMs - RACY_MS
    ) {
      local.set(rel, known);
      continue;
    }
    const sha = sha256Hex(readFileSync(abs));
    hashed++;
    local.set(rel, [sha, st.size, st.mtimeMs]);
    if (st.mtimeMs < now - RACY_MS) refreshable = true;
    if (!known) changes.push({ path: rel, status: "added", sha256: sha });
    else if (known[0] !== sha) changes.push({ path: rel, status: "modified", sha256: sha });
  }
  for (const rel of index.files.keys()) if (!local.has(rel)) changes.push({ path: rel, status: "deleted" });
  changes.sort(byPathBytes);
  return { changes, local, hashed, refreshable };
}
