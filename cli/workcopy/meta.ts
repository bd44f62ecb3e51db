import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { COPY_META_DIR } from "../../shared/api/path-rules.ts";

/**
 * A working copy's own metadata: everything lives in one folder `.quire/` at the copy's root, and
 * nothing else is written outside the repo's files.
 *
 * - `.quire/copy.json`: which server, repo and branch the copy follows, and the sequence its files
 *   are at.
 * - `.quire/index.json`: per path the content's SHA-256 (the server's `version_id`), its size and
 *   the mtime it had when last known to match, so `status` hashes only files whose size or mtime
 *   changed.
 */

export const META_DIR = COPY_META_DIR;

export interface CopyConfig {
  server: string;
  repo: string;
  branch: string;
  sequence: number;
}

/** One known file: [sha256 hex, size in bytes, mtime in ms]. Arrays keep 10,000 entries small. */
export type IndexEntry = [sha256: string, size: number, mtimeMs: number];

/*
 * The metadata is checked by hand rather than with zod: loading zod costs a CLI run most of a
 * second, and these two files have five fields.
 */
const isSeq = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isEntry = (v: unknown): v is IndexEntry =>
  Array.isArray(v) &&
  v.length === 3 &&
  typeof v[0] === "string" &&
  typeof v[1] === "number" &&
  typeof v[2] === "number";

function damaged(file: string): never {
  throw new CopyError(
    `${META_DIR}/${file} is damaged`,
    `clone the repo again into a new folder and move your changes there`,
  );
}

export interface CopyIndex {
  writtenAtMs: number;
  files: Map<string, IndexEntry>;
}

/** Thrown for anything the user must fix; the CLI prints `message` and exits 1. */
export class CopyError extends Error {
  readonly hint: string | undefined;
  readonly details: unknown;
  constructor(message: string, hint?: string, details?: unknown) {
    super(message);
    this.name = "CopyError";
    this.hint = hint;
    this.details = details;
  }
}

/** The root of the working copy holding `dir`: the nearest folder upwards with a `.quire/`. */
export async function findCopyRoot(dir: string): Promise<string> {
  let at = path.resolve(dir);
  for (;;) {
    if (
      await stat(path.join(at, META_DIR, "copy.json")).then(
        () => true,
        () => false,
      )
    )
      return at;
    const up = path.dirname(at);
    if (up === at)
      throw new CopyError(
        `not a working copy: no ${META_DIR}/ here or in any parent folder`,
        "run `quire clone <org>/<repo>` first, or cd into a working copy",
      );
    at = up;
  }
}

/** Writes a file whole or not at all: a crash never leaves half a metadata file. */
async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

export async function readConfig(root: string): Promise<CopyConfig> {
  const text = await readFile(path.join(root, META_DIR, "copy.json"), "utf8");
  let v: Partial<Record<keyof CopyConfig, unknown>>;
  try {
    v = JSON.parse(text);
  } catch {
    damaged("copy.json");
  }
  const { server, repo, branch, sequence } = v;
  if (
    typeof server !== "string" ||
    typeof repo !== "string" ||
    typeof branch !== "string" ||
    !isSeq(sequence)
  )
    damaged("copy.json");
  return { server, repo, branch, sequence };
}

export async function writeConfig(root: string, config: CopyConfig): Promise<void> {
  await mkdir(path.join(root, META_DIR), { recursive: true });
  await writeAtomic(path.join(root, META_DIR, "copy.json"), `${JSON.stringify(config, null, 2)}\n`);
}

export async function readIndex(root: string): Promise<CopyIndex> {
  const text = await readFile(path.join(root, META_DIR, "index.json"), "utf8").catch(() => null);
  if (text === null) return { writtenAtMs: 0, files: new Map() };
  let parsed: { written_at_ms?: unknown; files?: Record<string, unknown> };
  try {
    parsed = JSON.parse(text);
  } catch {
    damaged("index.json");
  }
  const files = new Map<string, IndexEntry>();
  if (typeof parsed.written_at_ms !== "number" || typeof parsed.files !== "object" || parsed.files === null)
    damaged("index.json");
  for (const [p, e] of Object.entries(parsed.files)) {
    if (!isEntry(e)) damaged("index.json");
    files.set(p, e);
  }
  return { writtenAtMs: parsed.written_at_ms, files };
}

export async function writeIndex(root: string, files: Map<string, IndexEntry>): Promise<void> {
  await mkdir(path.join(root, META_DIR), { recursive: true });
  const body = { written_at_ms: Date.now(), files: Object.fromEntries(files) };
  await writeAtomic(path.join(root, META_DIR, "index.json"), JSON.stringify(body));
}

/**
 * A path a pull could not merge by itself (`.quire/conflicts.json`): until `quire resolve` clears
 * it, `status` shows it and `commit` refuses. `kind` says what clashed; `remote` names the side
 * merged in, as `<branch>@<sequence>` (the label of its conflict markers).
 */
export interface PullConflict {
  path: string;
  kind:
    | "both changed"
    | "binary, both changed"
    | "deleted locally, changed remotely"
    | "changed locally, deleted remotely";
  remote: string;
}

const CONFLICT_KINDS: readonly PullConflict["kind"][] = [
  "both changed",
  "binary, both changed",
  "deleted locally, changed remotely",
  "changed locally, deleted remotely",
];

const isConflict = (v: unknown): v is PullConflict => {
  const c = v as Partial<Record<keyof PullConflict, unknown>>;
  return (
    typeof c === "object" &&
    c !== null &&
    typeof c.path === "string" &&
    typeof c.remote === "string" &&
    CONFLICT_KINDS.includes(c.kind as PullConflict["kind"])
  );
};

export async function readConflicts(root: string): Promise<PullConflict[]> {
  const text = await readFile(path.join(root, META_DIR, "conflicts.json"), "utf8").catch(() => null);
  if (text === null) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    damaged("conflicts.json");
  }
  if (!Array.isArray(parsed) || !parsed.every(isConflict)) damaged("conflicts.json");
  return parsed;
}

/** Records the pull's conflicts; none removes the file. */
export async function writeConflicts(root: string, conflicts: PullConflict[]): Promise<void> {
  const file = path.join(root, META_DIR, "conflicts.json");
  if (conflicts.length === 0) await rm(file, { force: true });
  else await writeAtomic(file, `${JSON.stringify(conflicts, null, 2)}\n`);
}

/** Refuses to go on while a pull's conflicts are unresolved, naming them. */
export async function refuseUnresolved(root: string, what: string): Promise<void> {
  const open = await readConflicts(root);
  if (open.length === 0) return;
  throw new CopyError(
    `cannot ${what}: ${open.length} path(s) still in conflict from the last pull: ${open.map((c) => c.path).join(", ")}`,
    "edit each file (look for `<<<<<<< local`), then `quire resolve <path>` (or `quire resolve` for all of them)",
    { conflicts: open },
  );
}
