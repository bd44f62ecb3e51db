import { mkdir, readdir } from "node:fs/promises";
import { CliError } from "../errors.ts";
import { branchCommits } from "../workcopy/history.ts";
import type { ChainEntry, Remote } from "../workcopy/remote.ts";
import { git, spawnGit } from "./git.ts";
import { withTrailers } from "./trailers.ts";

/*
 * `quire export-git` (docs/git.md): a branch's commits as a new git repository, one git commit
 * per Quire sequence, written by `git fast-import` from a stream: each file's bytes are fetched
 * once per distinct content (the chain names each file's SHA-256) and given a mark that later
 * commits reuse.
 */

const FETCHES_AT_ONCE = 8;

export interface ExportResult {
  repo: string;
  branch: string;
  directory: string;
  commits: number;
  head_sequence: number;
  git_head: string | null;
}

/** A folder that does not exist or is empty: an export never writes over anything. */
async function emptyFolder(dir: string): Promise<void> {
  const entries = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return [];
    throw e;
  });
  if (entries.length > 0)
    throw new CliError(`'${dir}' is not empty`, { hint: "export into a new or empty folder" });
  await mkdir(dir, { recursive: true });
}

/** A path as fast-import reads it: C-style quoted when it starts with `"` (Quire paths hold no LF). */
const fastImportPath = (path: string) =>
  path.startsWith('"') ? `"${path.replace(/["\\]/g, (c) => `\\${c}`)}"` : path;

/** `data` of fast-import: the byte count, then the bytes. */
const data = (bytes: Buffer) =>
  Buffer.concat([Buffer.from(`data ${bytes.length}\n`), bytes, Buffer.from("\n")]);

/** An identity as a git person: Quire authors are emails, so the email is the name too. */
const person = (author: string, createdAt: string) =>
  `${author} <${author}> ${Math.floor(Date.parse(createdAt) / 1000)} +0000`;

/** Writes to fast-import's stdin, waiting when the pipe is full. */
function writer(stream: NodeJS.WritableStream): (chunk: Buffer | string) => Promise<void> {
  return (chunk) =>
    new Promise((resolve, reject) => {
      if (stream.write(chunk, (e) => e && reject(e))) resolve();
      else stream.once("drain", resolve);
    });
}

/** Exports `branch` of `repo` at its head into a new git repository at `dir`. */
export async function exportGit(
  remote: Remote,
  o: { repo: string; branch: string; dir: string; note(line: string): void; verbose: boolean },
): Promise<ExportResult> {
  const head = (await remote.branch(o.repo, o.branch)).head_sequence;
  const commits = (
    await branchCommits({ repo: o.repo, branch: o.branch, sequence: head }, remote, Number.POSITIVE_INFINITY)
  ).reverse();
  await emptyFolder(o.dir);
  await git(["init", "-q", `--initial-branch=${o.branch}`], o.dir);
  const child = spawnGit(["fast-import", "--quiet", "--done"], o.dir);
  let err = "";
  child.stderr.on("data", (b: Buffer) => {
    err += b.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const write = writer(child.stdin);
  const marks = new Map<string, number>();
  let nextMark = 1;
  let prev: number | undefined;
  try {
    for (const c of commits) {
      await writeBlobs(c, remote, o.repo, marks, () => nextMark++, write);
      const mark = nextMark++;
      const message = withTrailers(c.message, [
        ["Quire-Sequence", String(c.sequence)],
        ["Quire-Hash", c.hash],
      ]);
      const lines = [
        `commit refs/heads/${o.branch}`,
        `mark :${mark}`,
        `author ${person(c.author, c.created_at)}`,
        `committer ${person(c.author, c.created_at)}`,
      ];
      await write(`${lines.join("\n")}\n`);
      await write(data(Buffer.from(message)));
      const changes = c.files.map((f) =>
        f.content_sha256 === ""
          ? `D ${fastImportPath(f.path)}`
          : `M 100644 :${marks.get(f.content_sha256)} ${fastImportPath(f.path)}`,
      );
      await write(`${prev === undefined ? "" : `from :${prev}\n`}${changes.join("\n")}\n\n`);
      prev = mark;
      if (o.verbose) o.note(`${o.repo}@${c.sequence} exported`);
    }
    await write("done\n");
  } finally {
    child.stdin.end();
  }
  const code = await exited;
  if (code !== 0) throw new CliError(`git fast-import failed (exit ${code}): ${err.trim()}`);
  let gitHead: string | null = null;
  if (commits.length > 0) {
    await git(["reset", "-q", "--hard"], o.dir);
    gitHead = (await git(["rev-parse", "HEAD"], o.dir)).toString().trim();
  }
  return {
    repo: o.repo,
    branch: o.branch,
    directory: o.dir,
    commits: commits.length,
    head_sequence: head,
    git_head: gitHead,
  };
}

/** Writes a `blob` with a new mark for each content of `c` not written before, fetched 8 at a time. */
async function writeBlobs(
  c: ChainEntry,
  remote: Remote,
  repo: string,
  marks: Map<string, number>,
  newMark: () => number,
  write: (chunk: Buffer | string) => Promise<void>,
): Promise<void> {
  const wanted = new Map<string, string>();
  for (const f of c.files)
    if (f.content_sha256 !== "" && !marks.has(f.content_sha256)) wanted.set(f.content_sha256, f.path);
  const todo = [...wanted];
  for (let i = 0; i < todo.length; i += FETCHES_AT_ONCE) {
    const batch = todo.slice(i, i + FETCHES_AT_ONCE);
    const bodies = await Promise.all(batch.map(([, path]) => remote.file(repo, path, c.branch, c.sequence)));
    for (const [k, [sha]] of batch.entries()) {
      const body = bodies[k];
      if (!body)
        throw new CliError(`${repo}@${c.sequence} lists '${batch[k]?.[1]}', but the server has no such file`);
      const mark = newMark();
      marks.set(sha, mark);
      await write(`blob\nmark :${mark}\n`);
      await write(data(body));
    }
  }
}
