import type { QuireClient } from "../client.ts";
import { commit, createBranch, createRepo } from "../fixtures.ts";
import { type Budget, type LoadResult, runLoad } from "../load.ts";
import { progress } from "../log.ts";

export const COMMIT_CLIENTS = 16;

/**
 * Where the clients commit. The three 16-client layouts differ only in what they contend on; the
 * single client shows what one commit costs when nothing waits, which the 16-client rates are
 * compared with to see how much the locks serialize.
 */
export type CommitLayout = "single" | "main" | "branches" | "repos";

export const LAYOUT_LABELS: Record<CommitLayout, string> = {
  single: "1 client on main of one repo",
  main: "16 clients, all on main of one repo",
  branches: "16 clients, each on its own branch of one repo",
  repos: "16 clients, each on main of its own repo",
};

/** Each client's target: every commit takes its branch's row lock, then the repo's counter row. */
interface Target {
  repo: string;
  branch: string;
}

const clientsOf = (layout: CommitLayout) => (layout === "single" ? 1 : COMMIT_CLIENTS);

async function targetsFor(q: QuireClient, layout: CommitLayout): Promise<Target[]> {
  const clients = Array.from({ length: clientsOf(layout) }, (_, w) => String(w).padStart(2, "0"));
  if (layout === "main" || layout === "single") {
    const repo = await createRepo(q, `load-${layout}`);
    return clients.map(() => ({ repo, branch: "main" }));
  }
  if (layout === "branches") {
    const repo = await createRepo(q, "load-branches");
    for (const c of clients) await createBranch(q, repo, `client-${c}`);
    return clients.map((c) => ({ repo, branch: `client-${c}` }));
  }
  const repos = [];
  for (const c of clients) repos.push(await createRepo(q, `load-own-${c}`));
  return repos.map((repo) => ({ repo, branch: "main" }));
}

/**
 * 1-file commits from concurrent clients. Each client rewrites its own 50 paths with new bytes
 * each time, so every commit inserts a content row, a file change and a commit, as a real edit does.
 */
export async function measureCommits(
  q: QuireClient,
  layout: CommitLayout,
  budget: Budget,
): Promise<LoadResult> {
  progress(`commits: ${LAYOUT_LABELS[layout]}`);
  const targets = await targetsFor(q, layout);
  return runLoad({
    label: `commits (${layout})`,
    concurrency: targets.length,
    warmup: 4 * targets.length,
    ...budget,
    send: async (i, w) => {
      const target = targets[w];
      if (target === undefined) throw new Error(`commits: no target for client ${w} of ${targets.length}`);
      const { repo, branch } = target;
      const path = `load/client-${w}/f${i % 50}.md`;
      await commit(q, repo, branch, `load ${i}`, [{ path, text: `commit ${i} by client ${w}\n` }]);
    },
  });
}
