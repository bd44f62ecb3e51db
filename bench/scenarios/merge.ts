import type { QuireClient } from "../client.ts";
import { commit, createBranch, fillerText, fixturePath, headOf, range } from "../fixtures.ts";
import { type LoadResult, runLoad } from "../load.ts";
import { progress } from "../log.ts";

/** The merge scenario's shape: `branches` branches, each one commit rewriting `files` tree files. */
export interface MergePlan {
  branches: number;
  files: number;
  /** Bytes of each rewritten file: the archive scenario then streams files of this size. */
  fileBytes: number;
  maxSeconds: number;
}

/** A branch off main's head with one commit rewriting the tree files `indexes` with new text. */
export async function branchRewriting(
  q: QuireClient,
  repo: string,
  name: string,
  indexes: number[],
  fileBytes: number,
): Promise<void> {
  await createBranch(q, repo, name);
  const changes = indexes.map((i) => ({ path: fixturePath(i), text: fillerText(fileBytes) }));
  await commit(q, repo, name, `rewrite ${indexes.length} files`, changes);
}

/**
 * Setup of the merge scenario: branches `merge-00`, `merge-01`, ... off main's head, branch k
 * rewriting files k*files .. (k+1)*files-1. The sets are disjoint, so no merge conflicts with the
 * merges before it, though each finds more changes on main since its base than the one before.
 */
export async function createMergeBranches(
  q: QuireClient,
  repo: string,
  treeFiles: number,
  plan: MergePlan,
): Promise<string[]> {
  if (plan.branches * plan.files > treeFiles)
    throw new Error(`${plan.branches} branches of ${plan.files} files do not fit a ${treeFiles}-file tree`);
  progress(`merge: creating ${plan.branches} branches of ${plan.files} rewritten files on ${repo}`);
  const names: string[] = [];
  for (let k = 0; k < plan.branches; k++) {
    const name = `merge-${String(k).padStart(2, "0")}`;
    await branchRewriting(q, repo, name, range(k * plan.files, (k + 1) * plan.files), plan.fileBytes);
    names.push(name);
  }
  return names;
}

/** POST merge; resolves to the new head of main. */
export async function mergeBranch(q: QuireClient, repo: string, branch: string): Promise<number> {
  return (await q.post("/repos/:repo*/-/merge", { params: { repo }, body: { branch } })).sequence;
}

/**
 * An untimed merge of the same shape on another repo, so the first timed merge does not pay for
 * compiling the merge path's code.
 */
export async function warmMergePath(q: QuireClient, repo: string, plan: MergePlan): Promise<void> {
  await branchRewriting(q, repo, "merge-warmup", range(0, plan.files), plan.fileBytes);
  await mergeBranch(q, repo, "merge-warmup");
}

/** The merges, one after another from one client; each must write one new commit on main. */
export async function measureMerges(
  q: QuireClient,
  repo: string,
  branches: string[],
  maxSeconds: number,
): Promise<LoadResult> {
  progress(`merge: merging ${branches.length} branches into main of ${repo}, one after another`);
  let head = await headOf(q, repo);
  return runLoad({
    label: "merges",
    concurrency: 1,
    maxRequests: branches.length,
    maxSeconds,
    send: async (i) => {
      const branch = branches[i];
      if (branch === undefined) throw new Error(`merge: no branch ${i} of ${branches.length}`);
      const sequence = await mergeBranch(q, repo, branch);
      if (sequence <= head) throw new Error(`merging ${branch} wrote no commit on main`);
      head = sequence;
    },
  });
}
