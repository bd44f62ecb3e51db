import { randomBytes } from "node:crypto";
import type { QuireClient } from "./client.ts";
import { type LoadResult, runLoad } from "./load.ts";

/** Most files one commit may carry (MAX_FILES_PER_COMMIT): the tree is written in commits of this size. */
export const BULK_FILES = 1_000;
/** Files that get every 10th edit, so that a few paths have long version chains. */
const HOT_FILES = 10;

export const ORG = "bench";

/** A repo built for the read scenarios: a tree of `files` files and `commits` commits on main. */
export interface RepoFixture {
  name: string;
  files: number;
  commits: number;
  /** Sequence right after the bulk commits: the whole tree exists, no file has been edited yet. */
  treeComplete: number;
  branch: string;
}

/**
 * The i-th file of a fixture tree. Zero padding makes index order equal byte order, so the tree
 * page that starts after fixturePath(k) holds files k+1..k+100.
 */
export function fixturePath(i: number): string {
  return `docs/d${String(Math.floor(i / 100)).padStart(3, "0")}/f${String(i).padStart(5, "0")}.md`;
}

/** The index of the hot file `j`: spread over the tree so they are not all on one page. */
export const hotFile = (j: number, files: number) => (j * Math.floor(files / HOT_FILES)) % files;

/** The file that 1-file commit `k` rewrites: every 10th commit a hot file, the rest round robin. */
function editedFile(k: number, files: number): number {
  return k % 10 === 0 ? hotFile(Math.floor(k / 10) % HOT_FILES, files) : k % files;
}

const base64 = (text: string) => Buffer.from(text).toString("base64");

/** `bytes` of new text: base64 of random bytes, which gzip shrinks to about 3/4, as prose would. */
export function fillerText(bytes: number): string {
  return randomBytes(Math.ceil((bytes * 3) / 4))
    .toString("base64")
    .slice(0, bytes);
}

/** One commit through the API; `text: null` deletes the path. Resolves to the new sequence. */
export async function commit(
  q: QuireClient,
  repo: string,
  branch: string,
  message: string,
  files: { path: string; text: string | null }[],
): Promise<number> {
  const body = {
    branch,
    message,
    files: files.map((f) => ({ path: f.path, content: f.text === null ? null : base64(f.text) })),
  };
  const res = await q.post("/repos/:repo*/-/commit", { params: { repo }, body });
  return res.sequence;
}

export async function createOrg(q: QuireClient): Promise<void> {
  await q.post("/orgs", { body: { name: ORG } });
}

export async function createRepo(q: QuireClient, name: string): Promise<string> {
  const full = `${ORG}/${name}`;
  await q.post("/repos", { body: { owner: ORG, name: full } });
  return full;
}

export async function createBranch(q: QuireClient, repo: string, name: string): Promise<void> {
  await q.post("/repos/:repo*/-/branch", { params: { repo }, body: { name } });
}

export async function headOf(q: QuireClient, repo: string, branch = "main"): Promise<number> {
  return (await q.get("/repos/:repo*/-/branch/:branch*", { params: { repo, branch } })).head_sequence;
}

/** Writes files 0..files-1 to main of `repo` in commits of BULK_FILES files; returns the commits made. */
export async function writeTree(q: QuireClient, repo: string, files: number): Promise<number> {
  const bulkCommits = Math.ceil(files / BULK_FILES);
  for (let c = 0; c < bulkCommits; c++) {
    const indexes = range(c * BULK_FILES, Math.min(files, (c + 1) * BULK_FILES));
    const changes = indexes.map((i) => ({ path: fixturePath(i), text: `# file ${i}\n\nversion 0\n` }));
    await commit(q, repo, "main", `bulk ${c + 1} of ${bulkCommits}`, changes);
  }
  return bulkCommits;
}

/**
 * 1-file edits to main of `repo` from `concurrency` clients, as many as `edits`. Their rate is one
 * more commits-per-second figure (main, on a growing repo); any failure stops the run, since the
 * read scenarios need the whole history.
 */
export async function editRepo(
  q: QuireClient,
  repo: string,
  opts: { files: number; edits: number; concurrency: number; maxSeconds: number },
): Promise<LoadResult> {
  const edits = await runLoad({
    label: `${repo} edits`,
    concurrency: opts.concurrency,
    maxRequests: opts.edits,
    maxSeconds: opts.maxSeconds,
    send: async (k) => {
      const i = editedFile(k, opts.files);
      await commit(q, repo, "main", `edit ${k}`, [
        { path: fixturePath(i), text: `# file ${i}\n\nedit ${k}\n` },
      ]);
    },
  });
  if (edits.errors > 0)
    throw new Error(`building ${repo}: ${edits.errors} commits failed: ${edits.firstError}`);
  return edits;
}

/**
 * A branch off the head of main with 5 commits: 3 edits and a new file on the first page, and a
 * deletion, so that a branch page really lays the branch's own rows over main's.
 */
export async function addBranch(q: QuireClient, repo: string): Promise<string> {
  const branch = "feature";
  await createBranch(q, repo, branch);
  for (const i of [1, 2, 3])
    await commit(q, repo, branch, `branch edit ${i}`, [{ path: fixturePath(i), text: `branch ${i}\n` }]);
  await commit(q, repo, branch, "branch add", [
    { path: `${fixturePath(1)}.new`, text: "new on the branch\n" },
  ]);
  await commit(q, repo, branch, "branch delete", [{ path: fixturePath(4), text: null }]);
  return branch;
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k);
}
