import type { Budget } from "./load.ts";

/** Sizes and time limits of one run. FULL gives the published figures; QUICK only checks the harness. */
export interface Plan {
  name: "full" | "quick";
  treeFiles: number;
  bigCommits: number;
  smallCommits: number;
  buildConcurrency: number;
  /** Cap on building one repo's edits; if hit, the table reports the commits actually made. */
  buildMaxSeconds: number;
  baseline: Budget;
  httpFloor: Budget;
  commits: Budget;
  reads: Budget;
}

// 3 to 5 minutes on 2 cores: most of it is the 19,990 edits of the big repo (100-300 commits/s).
export const FULL: Plan = {
  name: "full",
  treeFiles: 10_000,
  bigCommits: 20_000,
  smallCommits: 1_000,
  buildConcurrency: 16,
  buildMaxSeconds: 360,
  baseline: { maxRequests: 20_000, maxSeconds: 5 },
  httpFloor: { maxRequests: 2_000, maxSeconds: 3 },
  commits: { maxRequests: 4_000, maxSeconds: 15 },
  reads: { maxRequests: 1_000, maxSeconds: 8 },
};

export const QUICK: Plan = {
  name: "quick",
  treeFiles: 10_000,
  bigCommits: 2_000,
  smallCommits: 1_000,
  buildConcurrency: 16,
  buildMaxSeconds: 120,
  baseline: { maxRequests: 2_000, maxSeconds: 2 },
  httpFloor: { maxRequests: 200, maxSeconds: 1 },
  commits: { maxRequests: 500, maxSeconds: 3 },
  reads: { maxRequests: 200, maxSeconds: 2 },
};
