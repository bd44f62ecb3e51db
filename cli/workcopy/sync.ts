import { mkdir, rm, rmdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract } from "tar-stream";
import { unwritablePathProblem } from "../../shared/api/path-rules.ts";
import { CopyError, type CopyIndex, type IndexEntry, META_DIR } from "./meta.ts";
import type { Remote } from "./remote.ts";
import { eachLimit, type LocalChange, sha256Hex } from "./scan.ts";

/** What moving the copy's files from one tree to another does. */
export interface SyncPlan {
  /** Paths to write, with the version (SHA-256) each must have. */
  write: Map<string, string>;
  /** Paths to delete. */
  remove: string[];
}

/** Above this many files to fetch, one archive download beats one request per file. */
const ARCHIVE_FROM_FILES = 64;
const FETCH_CONCURRENCY = 8;

/** The plan from the files the index knows to the tree `target` (path → version id). */
export function planSync(known: Map<string, IndexEntry>, target: Map<string, string>): SyncPlan {
  const write = new Map<string, string>();
  for (const [p, v] of target) if (known.get(p)?.[0] !== v) write.set(p, v);
  const remove = [...known.keys()].filter((p) => !target.has(p));
  return { write, remove };
}

/** Local changes the plan would overwrite or delete: a sync must refuse these. */
export function clashes(plan: SyncPlan, changes: LocalChange[]): LocalChange[] {
  const touched = new Set([...plan.write.keys(), ...plan.remove]);
  return changes.filter((c) => touched.has(c.path));
}

/** Refuses a plan that would lose local work, naming the paths. */
export function refuseClashes(
  plan: SyncPlan,
  changes: LocalChange[],
  what: string,
  hint = "commit them (`quire commit -m …`) or undo them first, then try again",
): void {
  const lost = clashes(plan, changes);
  if (lost.length === 0) return;
  const list = lost.slice(0, 10).map((c) => `  ${c.status} ${c.path}`);
  if (lost.length > 10) list.push(`  … and ${lost.length - 10} more`);
  throw new CopyError(
    `${what} would overwrite local changes to ${lost.length} file(s):\n${list.join("\n")}`,
    hint,
    { paths: lost.map((c) => c.path) },
  );
}

/** A path from the server, refused if it could leave the copy or is the copy's own metadata. */
function insideCopy(root: string, rel: string): string {
  const abs = path.resolve(root, rel);
  if (!abs.startsWith(root + path.sep) || rel.split("/").some((s) => s === ".." || s === "." || s === ""))
    throw new CopyError(`the server sent an unsafe path '${rel}'; nothing more was written`);
  if (rel === META_DIR || rel.startsWith(`${META_DIR}/`))
    throw new CopyError(
      `the server sent '${rel}', inside the copy's own ${META_DIR}/; nothing more was written`,
    );
  return abs;
}

/**
 * A path to write: inside the copy, and none a working copy must never write (a `.quire`
 * look-alike segment anywhere, a segment over 255 bytes). treeMap leaves those out; this is the
 * last guard before the disk.
 */
function safeTarget(root: string, rel: string): string {
  const abs = insideCopy(root, rel);
  const problem = unwritablePathProblem(rel);
  if (problem) throw new CopyError(`the server sent '${rel}', which ${problem}; nothing more was written`);
  return abs;
}

/** Folders already made in this sync: 10,000 files in 100 folders need 100 mkdirs, not 10,000. */
type MadeDirs = Set<string>;

async function writeChecked(
  root: string,
  rel: string,
  bytes: Buffer,
  version: string,
  made: MadeDirs,
): Promise<IndexEntry> {
  const sha = sha256Hex(bytes);
  if (sha !== version)
    throw new CopyError(
      `download of '${rel}' has SHA-256 ${sha}, but the server's version is ${version}`,
      "try again",
    );
  const abs = safeTarget(root, rel);
  const dir = path.dirname(abs);
  try {
    if (!made.has(dir)) {
      await mkdir(dir, { recursive: true });
      made.add(dir);
    }
    await writeFile(abs, bytes);
  } catch (e) {
    throw unwritable(rel, e);
  }
  const st = await stat(abs);
  return [sha, st.size, st.mtimeMs];
}

/**
 * Writes bytes a merge made (not a server version) to `rel` inside the copy, with the same guards
 * as a download; answers its index entry.
 */
export async function writeMerged(root: string, rel: string, bytes: Buffer): Promise<IndexEntry> {
  return writeChecked(root, rel, bytes, sha256Hex(bytes), new Set());
}

/** A write the file system refused, named by the repo's path rather than the disk's. */
function unwritable(rel: string, e: unknown): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  // The server does not refuse a file `a` beside files under `a/` (git's trees cannot hold both).
  if (code === "EISDIR" || code === "ENOTDIR" || code === "EEXIST")
    return new CopyError(
      `cannot write '${rel}': the repo holds a file and a folder at the same path (${code})`,
      "delete or rename one of them in the repo, then clone again",
    );
  if (code === "ENAMETOOLONG" || code === "EILSEQ" || code === "EINVAL")
    return new CopyError(`cannot write '${rel}': this file system refuses its name (${code})`);
  return e;
}

/** Files written at once while the archive is read on: the disk works while gunzip and tar parse. */
const WRITE_CONCURRENCY = 16;

/** Writes the plan's files from the archive of (branch, at), skipping entries it does not need. */
async function fromArchive(
  root: string,
  stream: ReadableStream<Uint8Array>,
  wanted: Map<string, string>,
  done: Map<string, IndexEntry>,
  onProgress?: (done: number, total: number) => void,
): Promise<void> {
  const tar = extract();
  const made: MadeDirs = new Set();
  const inflight = new Set<Promise<void>>();
  tar.on("entry", (header, body, next) => {
    // Every entry is `<folder>/<path>` (docs/archives.md): drop the one top folder.
    const rel = header.name.slice(header.name.indexOf("/") + 1);
    const version = wanted.get(rel);
    if (header.type !== "file" || version === undefined) {
      body.resume();
      body.on("end", () => next());
      return;
    }
    const chunks: Buffer[] = [];
    body.on("data", (c: unknown) => chunks.push(c as Buffer));
    body.on("end", () => {
      const write: Promise<void> = writeChecked(root, rel, Buffer.concat(chunks), version, made)
        .then((entry) => {
          done.set(rel, entry);
          onProgress?.(done.size, wanted.size);
        })
        .finally(() => inflight.delete(write));
      write.catch((e: unknown) => tar.destroy(e as Error));
      inflight.add(write);
      if (inflight.size < WRITE_CONCURRENCY) next();
      else
        Promise.race(inflight).then(
          () => next(),
          () => {},
        );
    });
  });
  // pipeline: a broken download, bad gzip or a failed write (tar.destroy) rejects, never hangs.
  await pipeline(Readable.fromWeb(stream as import("node:stream/web").ReadableStream), createGunzip(), tar);
  await Promise.all(inflight);
}

/** Removes `abs` and then each parent folder that became empty, up to the root. */
async function removeFile(root: string, abs: string): Promise<void> {
  await rm(abs, { force: true });
  for (let dir = path.dirname(abs); dir !== root && dir.startsWith(root); dir = path.dirname(dir)) {
    if (
      !(await rmdir(dir).then(
        () => true,
        () => false,
      ))
    )
      break;
  }
}

/**
 * Carries out `plan` for the tree at (branch, at): downloads what changed (one archive when many
 * files changed, else one request per file), checks each body against its version, deletes what
 * went. Answers the index of the files now on disk.
 */
export async function applySync(
  root: string,
  remote: Remote,
  where: { repo: string; branch: string; at: number },
  index: CopyIndex,
  plan: SyncPlan,
  onProgress?: (done: number, total: number) => void,
): Promise<Map<string, IndexEntry>> {
  const files = new Map(index.files);
  const written = new Map<string, IndexEntry>();
  const made: MadeDirs = new Set();
  if (plan.write.size >= ARCHIVE_FROM_FILES) {
    const archive = await remote.archive(where.repo, where.branch, where.at);
    await fromArchive(root, archive, plan.write, written, onProgress);
    const missing = [...plan.write.keys()].filter((p) => !written.has(p));
    if (missing.length > 0)
      throw new CopyError(`the archive lacked ${missing.length} file(s), e.g. '${missing[0]}'`, "try again");
  } else {
    await eachLimit([...plan.write], FETCH_CONCURRENCY, async ([rel, version]) => {
      const bytes = await remote.file(where.repo, rel, where.branch, where.at);
      if (bytes === null)
        throw new CopyError(`'${rel}' vanished from the server while fetching`, "try again");
      written.set(rel, await writeChecked(root, rel, bytes, version, made));
      onProgress?.(written.size, plan.write.size);
    });
  }
  for (const [rel, entry] of written) files.set(rel, entry);
  for (const rel of plan.remove) {
    // Not safeTarget: a file an older quire wrote at a path now refused is removed like any other.
    await removeFile(root, insideCopy(root, rel));
    files.delete(rel);
  }
  return files;
}

/** Told of each path of the tree a copy does not write, and why (the CLI prints a warning). */
export type OnSkip = (path: string, why: string) => void;

/**
 * The tree at (branch, at) as path → version id, without the paths a working copy never writes
 * (docs/names.md, "Paths that cannot be written"; an older server may hold some): a `.quire`
 * segment would plant metadata naming any server, a segment over 255 bytes cannot be created.
 * Each is told to `onSkip`; the copy then acts as if the repo did not have it.
 */
export async function treeMap(
  remote: Remote,
  where: { repo: string; branch: string; at: number },
  onSkip?: OnSkip,
): Promise<Map<string, string>> {
  const target = new Map<string, string>();
  for (const e of await remote.tree(where.repo, where.branch, where.at)) {
    const problem = unwritablePathProblem(e.path);
    if (problem) onSkip?.(e.path, problem);
    else target.set(e.path, e.version_id);
  }
  return target;
}
