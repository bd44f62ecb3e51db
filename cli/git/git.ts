import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { CliError } from "../errors.ts";

/*
 * The `git` binary, driven as a child process (no git library: docs/git.md). Reads go through a
 * few whole-output commands (`log`, `diff-tree --stdin`) and one long-lived `cat-file
 * --batch-command` for blob sizes and bodies; writes through `fast-import` (export.ts).
 */

/** A git command that failed: its arguments and what git said. */
function gitFailed(args: string[], code: number | null, stderr: string): CliError {
  const said = stderr.trim().split("\n").slice(-3).join("; ");
  return new CliError(`git ${args[0]} failed (exit ${code}): ${said || "no message"}`, {
    hint: "check that the path is a git repository and the branch exists (`git -C <path> branch -a`)",
  });
}

/** A started git command, failing with a CliError when git is not installed. */
export function spawnGit(args: string[], cwd: string): ChildProcessWithoutNullStreams {
  const child = spawn("git", args, { cwd, stdio: ["pipe", "pipe", "pipe"] });
  child.on("error", () => {});
  return child;
}

/** Runs `git <args>` in `cwd` to its end, feeding `input`; answers its stdout. */
export function git(args: string[], cwd: string, input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(args, cwd);
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => {
      err += b.toString();
    });
    child.on("error", (e) =>
      reject(
        new CliError(`could not run git in '${cwd}': ${e.message}`, {
          hint: "check that the folder exists, and that git is installed and on PATH",
        }),
      ),
    );
    child.on("close", (code) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(gitFailed(args, code, err)),
    );
    child.stdin.on("error", () => {});
    child.stdin.end(input ?? "");
  });
}

/** One git commit as the import reads it. */
export interface GitCommit {
  sha: string;
  tree: string;
  /** How many parents: above one is a merge. */
  parents: number;
  /** `Name <email>` */
  author: string;
  /** Author date, ISO 8601 with the author's offset. */
  date: string;
  message: string;
}

/**
 * The commits of `ref`, oldest first, parents before children (`--topo-order`), with their
 * trees, authors and messages, in one `git log` (NUL-separated fields and records).
 */
export async function listCommits(cwd: string, ref: string): Promise<GitCommit[]> {
  const out = await git(
    ["log", "-z", "--reverse", "--topo-order", "--format=%H %T %P%x00%an <%ae>%x00%aI%x00%B", ref, "--"],
    cwd,
  );
  const fields = out.toString("utf8").split("\0");
  const commits: GitCommit[] = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const [sha = "", tree = "", ...parents] = (fields[i] ?? "").trim().split(" ");
    commits.push({
      sha,
      tree,
      parents: parents.filter(Boolean).length,
      author: fields[i + 1] ?? "",
      date: fields[i + 2] ?? "",
      message: fields[i + 3] ?? "",
    });
  }
  return commits;
}

/** The id of the empty tree in this repository's hash (SHA-1 or SHA-256). */
export async function emptyTree(cwd: string): Promise<string> {
  return (await git(["hash-object", "-t", "tree", "/dev/null"], cwd)).toString().trim();
}

/** One entry of `git diff-tree --raw`: a path whose mode or blob changed between two trees. */
export interface TreeChange {
  /** The path's bytes as UTF-8, or null when they are not valid UTF-8. */
  path: string | null;
  /** The raw path, for messages about a path that is not UTF-8. */
  rawPath: string;
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodePath(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * The changes between each pair of trees, in the order given, with one `git diff-tree --stdin`
 * (`--always` prints a header even for equal trees, so every pair gets its list).
 */
export async function diffTrees(cwd: string, pairs: [string, string][]): Promise<TreeChange[][]> {
  if (pairs.length === 0) return [];
  const input = pairs.map(([a, b]) => `${a} ${b}\n`).join("");
  const out = await git(
    ["diff-tree", "--stdin", "--always", "-r", "-z", "--no-renames", "--raw"],
    cwd,
    input,
  );
  const lists: TreeChange[][] = [];
  let p = 0;
  while (p < out.length) {
    if (out[p] !== 0x3a /* ':' */) {
      // A header line `<tree> <tree>\n`: the next pair's changes follow.
      const nl = out.indexOf(0x0a, p);
      lists.push([]);
      p = nl === -1 ? out.length : nl + 1;
      continue;
    }
    const metaEnd = out.indexOf(0, p);
    const pathEnd = out.indexOf(0, metaEnd + 1);
    const [oldMode = "", newMode = "", oldBlob = "", newBlob = ""] = out
      .subarray(p + 1, metaEnd)
      .toString()
      .split(" ");
    const raw = out.subarray(metaEnd + 1, pathEnd);
    lists.at(-1)?.push({
      path: decodePath(raw),
      rawPath: raw.toString("latin1"),
      oldMode,
      newMode,
      oldBlob,
      newBlob,
    });
    p = pathEnd + 1;
  }
  if (lists.length !== pairs.length)
    throw new CliError(`git diff-tree answered ${lists.length} diffs for ${pairs.length} pairs of trees`);
  return lists;
}

interface Pending {
  resolve(v: { size: number; body?: Buffer }): void;
  reject(e: Error): void;
  withBody: boolean;
}

/**
 * Blob sizes and bodies from one `git cat-file --batch-command` (git 2.36 or later): requests are
 * written as they come and answered in order, so many can be in flight.
 */
export class BlobReader {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #queue: Pending[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  #failure: Error | undefined;

  constructor(cwd: string) {
    this.#child = spawnGit(["cat-file", "--batch-command"], cwd);
    this.#child.stdout.on("data", (b: Buffer) => this.#take(b));
    let err = "";
    this.#child.stderr.on("data", (b: Buffer) => {
      err += b.toString();
    });
    this.#child.on("close", (code) => this.#fail(gitFailed(["cat-file"], code, err)));
    this.#child.stdin.on("error", (e) => this.#fail(e));
  }

  /** The blob's size in bytes. */
  async size(blob: string): Promise<number> {
    return (await this.#ask(`info ${blob}\n`, false)).size;
  }

  /** The blob's bytes. */
  async read(blob: string): Promise<Buffer> {
    return (await this.#ask(`contents ${blob}\n`, true)).body ?? Buffer.alloc(0);
  }

  close(): void {
    this.#child.stdin.end();
  }

  #ask(command: string, withBody: boolean): Promise<{ size: number; body?: Buffer }> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#queue.push({ resolve, reject, withBody });
      this.#child.stdin.write(command);
    });
  }

  #fail(e: Error): void {
    this.#failure ??= e;
    for (const p of this.#queue.splice(0)) p.reject(e);
  }

  /** Answers every request whose whole reply has arrived: `<id> <type> <size>\n[<body>\n]`. */
  #take(chunk: Buffer): void {
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk;
    for (;;) {
      const next = this.#queue[0];
      const nl = this.#buffer.indexOf(0x0a);
      if (!next || nl === -1) return;
      const header = this.#buffer.subarray(0, nl).toString().split(" ");
      if (header[1] === "missing") {
        this.#buffer = this.#buffer.subarray(nl + 1);
        this.#queue.shift();
        next.reject(new CliError(`git has no object ${header[0]}`));
        continue;
      }
      const size = Number(header[2]);
      if (!next.withBody) {
        this.#buffer = this.#buffer.subarray(nl + 1);
        this.#queue.shift();
        next.resolve({ size });
        continue;
      }
      if (this.#buffer.length < nl + 1 + size + 1) return;
      const body = Buffer.from(this.#buffer.subarray(nl + 1, nl + 1 + size));
      this.#buffer = this.#buffer.subarray(nl + 1 + size + 1);
      this.#queue.shift();
      next.resolve({ size, body });
    }
  }
}
