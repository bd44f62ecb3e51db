import { mkdir, mkdtemp, readdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import {
  type CopyConfig,
  CopyError,
  type CopyIndex,
  findCopyRoot,
  type IndexEntry,
  readConfig,
  readIndex,
  refuseUnresolved,
  writeConfig,
  writeIndex,
} from "./meta.ts";
import { type Remote, RemoteError } from "./remote.ts";
import { type LocalChange, type ScanResult, scan } from "./scan.ts";
import { applySync, type OnSkip, planSync, refuseClashes, treeMap } from "./sync.ts";

/**
 * Most file changes one commit may carry: MAX_COMMIT_FILES of shared/api/commits.ts, not
 * imported because that module loads zod, most of a second of every CLI run
 * (test/cli/workcopy.test.ts checks the two agree).
 */
export const MAX_COMMIT_FILES = 1000;

/** An opened working copy: where it is, what it follows, what it last knew. */
export interface Copy {
  root: string;
  config: CopyConfig;
  index: CopyIndex;
  /** Told how many of the files to fetch are written, as a download goes (a progress bar). */
  onProgress?: (done: number, total: number) => void;
  /** Told of each path of the repo the copy does not write (a warning). */
  onSkip?: OnSkip;
}

export async function openCopy(dir: string): Promise<Copy> {
  const root = await findCopyRoot(dir);
  return { root, config: await readConfig(root), index: await readIndex(root) };
}

/** Records that the copy's files are the tree of (branch, sequence), as `files` describes them. */
export async function settle(
  copy: Copy,
  files: Map<string, IndexEntry>,
  moved: Partial<CopyConfig>,
): Promise<void> {
  copy.config = { ...copy.config, ...moved };
  await writeIndex(copy.root, files);
  await writeConfig(copy.root, copy.config);
  copy.index = await readIndex(copy.root);
}

export interface CloneResult {
  root: string;
  repo: string;
  branch: string;
  sequence: number;
  files: number;
}

/**
 * Clones `repo` at `branch` (its head, or `at`) into `dir`: one archive download, every body
 * checked against the tree's version ids, then `.quire/` written last. A clone that fails leaves
 * nothing behind (cloneInto).
 */
export async function clone(
  remote: Remote,
  opts: {
    repo: string;
    dir: string;
    branch: string;
    at?: number;
    onProgress?: (done: number, total: number) => void;
    onSkip?: OnSkip;
  },
): Promise<CloneResult> {
  const root = path.resolve(opts.dir);
  const existing = await readdir(root).catch(() => null);
  if (existing && existing.length > 0)
    throw new CopyError(
      `'${opts.dir}' exists and is not empty`,
      "choose another folder: quire clone <repo> <dir>",
    );
  const head = (await remote.branch(opts.repo, opts.branch)).head_sequence;
  const at = opts.at ?? head;
  if (at > head)
    throw new CopyError(
      `sequence ${at} is beyond the head of '${opts.branch}' (${head})`,
      `use --at ${head} or less`,
    );
  const where = { repo: opts.repo, branch: opts.branch, at };
  const target = await treeMap(remote, where, opts.onSkip);
  const files = await cloneInto(root, existing !== null, async (into) => {
    const copy: Copy = {
      root: into,
      config: { server: remote.server, repo: opts.repo, branch: opts.branch, sequence: at },
      index: { writtenAtMs: 0, files: new Map() },
    };
    const written = await applySync(
      into,
      remote,
      where,
      copy.index,
      planSync(new Map(), target),
      opts.onProgress,
    );
    await settle(copy, written, {});
    return written;
  });
  return { root, repo: opts.repo, branch: opts.branch, sequence: at, files: files.size };
}

/**
 * Runs `fill` on a folder that becomes `root` only when it succeeds, so a failed clone (a broken
 * download, a file that cannot be written) leaves nothing a user must clean up. An absent `root`
 * is filled as a hidden temporary sibling (same file system) and renamed into place at the end; an
 * empty folder the user made is filled in place and emptied again on failure, never removed.
 */
async function cloneInto<T>(root: string, exists: boolean, fill: (dir: string) => Promise<T>): Promise<T> {
  if (exists) {
    try {
      return await fill(root);
    } catch (e) {
      for (const entry of await readdir(root))
        await rm(path.join(root, entry), { recursive: true, force: true });
      throw e;
    }
  }
  // The first parent folder mkdir had to make, if any: ours to remove too.
  const madeParent = await mkdir(path.dirname(root), { recursive: true });
  const temp = await mkdtemp(path.join(path.dirname(root), `.${path.basename(root)}.clone-`));
  try {
    const result = await fill(temp);
    await rename(temp, root);
    return result;
  } catch (e) {
    await rm(madeParent ?? temp, { recursive: true, force: true });
    throw e;
  }
}

/** Local changes; rewrites the index when files were hashed that are now safely old (fast next time). */
export async function status(copy: Copy): Promise<ScanResult> {
  const result = await scan(copy.root, copy.index);
  if (result.refreshable) {
    const files = new Map(copy.index.files);
    for (const [p, e] of result.local) if (files.get(p)?.[0] === e[0]) files.set(p, e);
    await writeIndex(copy.root, files);
  }
  return result;
}

async function readChanges(root: string, changes: LocalChange[]) {
  return Promise.all(
    changes.map(async (c) => ({
      path: c.path,
      content: c.status === "deleted" ? null : (await readFile(path.join(root, c.path))).toString("base64"),
    })),
  );
}

export interface CommitResult {
  sequence: number;
  branch: string;
  files: number;
  /** Files of others' commits brought in after a forced commit over them. */
  broughtIn: number;
}

/**
 * Commits every local change as one commit on the copy's branch. Conditional on the branch head
 * still being the copy's sequence (`expected_head_sequence`), so work never lands on a head the
 * user has not seen; `force` drops the condition and then brings in what others committed.
 */
export async function commit(
  copy: Copy,
  remote: Remote,
  opts: { message: string; force: boolean; confirmDiscard?: ConfirmDiscard },
): Promise<CommitResult> {
  await refuseUnresolved(copy.root, "commit");
  const { changes, local } = await scan(copy.root, copy.index);
  if (changes.length === 0)
    throw new CopyError("nothing to commit: no local changes", "edit, add or delete files first");
  if (changes.length > MAX_COMMIT_FILES)
    throw new CopyError(
      `${changes.length} changed files: one commit holds at most ${MAX_COMMIT_FILES}`,
      "commit part of the work: move some changes aside, commit, then bring them back",
    );
  const { repo, branch, sequence } = copy.config;
  // Forced: over the head seen now, once told which of its changes the commit discards.
  const expected = opts.force ? await forcedHead(copy, remote, changes, opts.confirmDiscard) : sequence;
  let created: { sequence: number };
  try {
    created = await remote.commit(repo, {
      branch,
      message: opts.message,
      files: await readChanges(copy.root, changes),
      expected_head_sequence: expected,
    });
  } catch (e) {
    if (e instanceof RemoteError && e.code === "HEAD_MOVED")
      throw new CopyError(
        `'${branch}' moved to sequence ${String(e.body["head_sequence"])} since ${opts.force ? "it was checked" : `this copy's sequence ${sequence}`}; nothing was committed`,
        "run `quire pull` to merge the new commits into your changes (files changed on both sides are merged line by line; overlapping edits become conflicts to resolve), then commit again",
        { head_sequence: e.body["head_sequence"] },
      );
    if (e instanceof RemoteError && e.code === "BRANCH_NOT_ACTIVE") throw await notActive(copy, remote);
    if (e instanceof RemoteError && e.status === 413)
      throw new CopyError(
        `the commit of ${changes.length} file(s) is larger than the server accepts in one request`,
        "commit the large files on their own, or in parts (docs/blobs.md: one file may be just under 24 MiB)",
      );
    throw e;
  }
  // The files on disk are what was committed: they become the index.
  const files = new Map(copy.index.files);
  for (const c of changes) {
    const entry = local.get(c.path);
    if (entry) files.set(c.path, entry);
    else files.delete(c.path);
  }
  const at = created.sequence;
  await settle(copy, files, { sequence: at });
  if (!opts.force) return { sequence: at, branch, files: changes.length, broughtIn: 0 };
  // Forced: the branch may have moved, and its new head also holds the commits made meanwhile.
  const target = await treeMap(remote, { repo, branch, at }, copy.onSkip);
  const plan = planSync(copy.index.files, target);
  if (plan.write.size + plan.remove.length > 0)
    await settle(copy, await applySync(copy.root, remote, { repo, branch, at }, copy.index, plan), {});
  return { sequence: at, branch, files: changes.length, broughtIn: plan.write.size + plan.remove.length };
}

/**
 * Asked before a forced commit discards remote changes: the paths both the copy and the branch
 * changed since the copy's sequence, and the head the commit would go over. Answers whether to go on.
 */
export type ConfirmDiscard = (paths: string[], head: number) => Promise<boolean>;

/**
 * The head a forced commit goes over: the branch's head now. The local changes to paths the
 * branch also changed since the copy's sequence replace those changes, so they are named to
 * `confirm` first (which may refuse); without `confirm`, such a commit is refused.
 */
async function forcedHead(
  copy: Copy,
  remote: Remote,
  changes: LocalChange[],
  confirm: ConfirmDiscard | undefined,
): Promise<number> {
  const { repo, branch, sequence } = copy.config;
  const head = (await remote.branch(repo, branch)).head_sequence;
  if (head === sequence) return head;
  const target = await treeMap(remote, { repo, branch, at: head }, copy.onSkip);
  const remoteChanged = (p: string) => target.get(p) !== copy.index.files.get(p)?.[0];
  const discarded = changes.map((c) => c.path).filter(remoteChanged);
  if (discarded.length > 0 && !(await confirm?.(discarded, head)))
    throw new CopyError(
      `nothing was committed: the commit would discard the changes of '${branch}' up to sequence ${head} to ${discarded.join(", ")}`,
      "`quire pull` merges them with yours instead; or pass --yes with --force to discard them",
      { discarded },
    );
  return head;
}

/** Why a branch takes no commits, and where work goes next. */
export async function notActive(copy: Copy, remote: Remote): Promise<CopyError> {
  const { repo, branch } = copy.config;
  const info = await remote.branch(repo, branch).catch(() => null);
  const state =
    info?.status === "merged"
      ? "was merged into main"
      : info?.status === "abandoned"
        ? "was abandoned (deleted)"
        : "is no longer active";
  return new CopyError(
    `'${branch}' ${state}: it takes no more commits; nothing was committed`,
    "carry your changes to a new branch: `quire switch main` (or `quire switch --merge main` when main changed the same files), then `quire branch <new-name>`, then commit",
  );
}

export interface MoveResult {
  branch: string;
  from: number;
  sequence: number;
  written: number;
  removed: number;
  kept: number;
}

/**
 * Brings the copy's files to (branch, at): fetches what differs from what the copy knows, keeps
 * local changes to other paths, and refuses (changing nothing) when a change would be overwritten.
 */
export async function moveTo(
  copy: Copy,
  remote: Remote,
  branch: string,
  at: number,
  what: string,
  clashHint?: string,
): Promise<MoveResult> {
  const { changes } = await scan(copy.root, copy.index);
  const target = await treeMap(remote, { repo: copy.config.repo, branch, at }, copy.onSkip);
  const plan = planSync(copy.index.files, target);
  refuseClashes(plan, changes, what, clashHint);
  // A new local file at a path the target adds is a clash too: planSync counts it as a write.
  const files = await applySync(
    copy.root,
    remote,
    { repo: copy.config.repo, branch, at },
    copy.index,
    plan,
    copy.onProgress,
  );
  const from = copy.config.sequence;
  await settle(copy, files, { branch, sequence: at });
  return {
    branch,
    from,
    sequence: at,
    written: plan.write.size,
    removed: plan.remove.length,
    kept: changes.length,
  };
}

/** Switches the copy to another branch's head; local changes to paths that differ are refused. */
export async function switchBranch(copy: Copy, remote: Remote, branch: string): Promise<MoveResult> {
  await refuseUnresolved(copy.root, "switch");
  let head: number;
  try {
    head = (await remote.branch(copy.config.repo, branch)).head_sequence;
  } catch (e) {
    if (e instanceof RemoteError && e.code === "BRANCH_NOT_FOUND")
      throw new CopyError(
        `no branch '${branch}' in ${copy.config.repo}`,
        `create it from main with \`quire branch ${branch}\``,
      );
    throw e;
  }
  return moveTo(
    copy,
    remote,
    branch,
    head,
    `switching to '${branch}'`,
    `commit them or undo them first; or carry them along, merged with '${branch}''s files: \`quire switch --merge ${branch}\``,
  );
}

/** Creates `name` from main's head and switches the copy to it. */
export async function createBranch(copy: Copy, remote: Remote, name: string): Promise<MoveResult> {
  await remote.createBranch(copy.config.repo, name);
  return switchBranch(copy, remote, name);
}
