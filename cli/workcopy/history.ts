import { commitHash } from "../../shared/commits/hash.ts";
import { CopyError } from "./meta.ts";
import type { ChainEntry, Remote } from "./remote.ts";

const ZERO_HASH = "0".repeat(64);

/** A chain entry's hash recomputed from what the chain shows of it (docs/hash-chain.md). */
export const recomputedHash = (c: ChainEntry) =>
  commitHash({
    prevHash: c.prev_hash ?? ZERO_HASH,
    sequence: c.sequence,
    repo: c.repo,
    branch: c.branch,
    author: c.author,
    message: c.message,
    createdAt: c.created_at,
    files: c.files.map((f) => ({ path: f.path, sha256: f.content_sha256 })),
  });

const PAGE = 1000;

export interface LogEntry {
  sequence: number;
  /** The commit's hash in the repo's chain (hex). */
  hash: string;
  branch: string;
  author: string;
  message: string;
  created_at: string;
  files: number;
}

const toLog = (c: ChainEntry): LogEntry => ({
  sequence: c.sequence,
  hash: c.hash,
  branch: c.branch,
  author: c.author,
  message: c.message,
  created_at: c.created_at,
  files: c.files.length,
});

/** A branch of a repo at a sequence: what a working copy holds, or what `export-git` writes. */
export interface BranchAt {
  repo: string;
  branch: string;
  sequence: number;
}

/**
 * The chain entries that make up `at`'s branch at its sequence, newest first: on a branch its own
 * commits since its base, then `main`'s up to that base. Read from the chain endpoint (the API has
 * no commit list), a page of 1,000 sequences at a time going back, until `limit` are found.
 */
export async function branchCommits(at: BranchAt, remote: Remote, limit: number): Promise<ChainEntry[]> {
  const { repo, branch, sequence } = at;
  const base = branch === "main" ? sequence : (await remote.branch(repo, branch)).base_sequence;
  const belongs = (c: ChainEntry) =>
    (c.branch === branch && c.sequence <= sequence && (branch === "main" || c.sequence > base)) ||
    (c.branch === "main" && c.sequence <= base);
  const out: ChainEntry[] = [];
  for (let to = sequence; to >= 1 && out.length < limit; to -= PAGE) {
    const page = await remote.chain(repo, Math.max(1, to - PAGE + 1), to);
    for (const c of page.reverse()) if (belongs(c) && out.length < limit) out.push(c);
  }
  return out;
}

/** The copy's branch at its sequence as `quire log` shows it, newest first (branchCommits). */
export async function log(at: BranchAt, remote: Remote, limit: number): Promise<LogEntry[]> {
  return (await branchCommits(at, remote, limit)).map(toLog);
}

export interface VerifyResult {
  ok: boolean;
  commits: number;
  branches: number;
  /** The first sequence whose hash or link does not hold, and why. */
  firstBad?: { sequence: number; branch: string; reason: string };
}

/** The highest head over the repo's branches of every status: the chain must reach it. */
async function highestHead(remote: Remote, repo: string): Promise<number> {
  const lists = await Promise.all(
    ["active", "merged", "abandoned"].map((status) =>
      remote.branches(repo, { status, include_draft: "true" }),
    ),
  );
  const main = await remote.branch(repo, "main");
  return Math.max(main.head_sequence, ...lists.flat().map((b) => b.head_sequence));
}

/**
 * Downloads the repo's whole hash chain and recomputes every hash with the server's own function
 * (shared/commits/hash.ts), checking that each commit links to the previous one on its branch.
 * Pages continue past the highest known head until one comes back empty, so a commit the branch
 * list does not show is still checked.
 */
export async function verify(repo: string, remote: Remote): Promise<VerifyResult> {
  const top = await highestHead(remote, repo);
  const commits: ChainEntry[] = [];
  for (let from = 1; ; from += PAGE) {
    const page = await remote.chain(repo, from, from + PAGE - 1);
    commits.push(...page);
    if (page.length === 0 && from > top) break;
  }
  commits.sort((a, b) => a.sequence - b.sequence);
  const lastOnBranch = new Map<string, string>();
  for (const c of commits) {
    const expectedPrev = lastOnBranch.get(c.branch) ?? ZERO_HASH;
    const recomputed = recomputedHash(c);
    const reason =
      recomputed !== c.hash
        ? `its contents do not hash to its recorded hash (recomputed ${recomputed.slice(0, 12)}…, recorded ${c.hash.slice(0, 12)}…)`
        : (c.prev_hash ?? ZERO_HASH) !== expectedPrev
          ? `its prev_hash does not match the hash of the previous commit on '${c.branch}'`
          : null;
    if (reason)
      return {
        ok: false,
        commits: commits.length,
        branches: lastOnBranch.size,
        firstBad: { sequence: c.sequence, branch: c.branch, reason },
      };
    lastOnBranch.set(c.branch, c.hash);
  }
  return { ok: true, commits: commits.length, branches: lastOnBranch.size };
}

export interface ShowResult {
  sequence: number;
  branch: string;
  author: string;
  message: string;
  created_at: string;
  files: {
    path: string;
    version_id: string | null;
    status: "added" | "modified" | "deleted";
    patch?: string;
  }[];
}

/** One commit with, per file, whether it was added, modified or deleted (and the patch when asked). */
export async function show(
  repo: string,
  remote: Remote,
  sequence: number,
  opts: { patch: boolean; patchOf: (path: string, before: Buffer | null, after: Buffer | null) => string },
): Promise<ShowResult> {
  const c = await remote.getCommit(repo, sequence).catch((e: unknown) => {
    if ((e as { code?: string }).code === "COMMIT_NOT_FOUND")
      throw new CopyError(`no commit ${sequence} in ${repo}`, "see the sequences with `quire log`");
    throw e;
  });
  const files = await Promise.all(
    c.files.map(async (f) => {
      const before = sequence > 1 ? await remote.file(repo, f.path, c.branch, sequence - 1) : null;
      const after =
        f.version_id === null || !opts.patch ? null : await remote.file(repo, f.path, c.branch, sequence);
      const status = f.version_id === null ? "deleted" : before === null ? "added" : "modified";
      return {
        path: f.path,
        version_id: f.version_id,
        status,
        ...(opts.patch ? { patch: opts.patchOf(f.path, before, after) } : {}),
      } as const;
    }),
  );
  return {
    sequence: c.sequence,
    branch: c.branch,
    author: c.author,
    message: c.message,
    created_at: c.created_at,
    files,
  };
}
