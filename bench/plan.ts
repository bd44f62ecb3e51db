import type { Budget } from "./load.ts";
import { CI_PLAN, type CiPlan } from "./scenarios/ci.ts";
import type { MergePlan } from "./scenarios/merge.ts";
import { SSE_PLAN, type SsePlan } from "./scenarios/sse.ts";
import { WEBHOOK_PLAN, type WebhookPlan } from "./scenarios/webhooks.ts";

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
  /** Merges of branches of 500 rewritten files into main of the big repo. */
  merge: MergePlan;
  /** GET branch status, without and with the two policies on main. */
  status: Budget;
  /** measurePolicyEvaluation: warm evaluations, and each of the new-instance and cold cases. */
  policy: { warmRuns: number; coldRuns: number };
  /** Timed archive downloads of the big repo, after the untimed one that checks it. */
  archiveRepeats: number;
  /** Commit to SSE receipt, 100 streams over the server and a second instance on its database. */
  sse: SsePlan;
  /** Webhook deliveries to 20 subscriptions: a held backlog drained, then live commits. */
  webhooks: WebhookPlan;
  /** CI scheduler: claims from 16 workers, and commit to claimable. */
  ci: CiPlan;
}

// 4 to 6 minutes on 2 cores: most of it is the 19,990 edits of the big repo (100-300 commits/s).
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
  // 20 x 500 files: every file of the tree rewritten once, at 4 KiB, which the archive then streams.
  merge: { branches: 20, files: 500, fileBytes: 4096, maxSeconds: 300 },
  status: { maxRequests: 200, maxSeconds: 10 },
  policy: { warmRuns: 2_000, coldRuns: 20 },
  archiveRepeats: 3,
  // The standalone scripts' sizes: 200 x 100 = 20,000 SSE deliveries, 250 x 20 = 5,000 webhook
  // deliveries in each part.
  sse: SSE_PLAN,
  webhooks: WEBHOOK_PLAN,
  ci: CI_PLAN,
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
  merge: { branches: 3, files: 500, fileBytes: 4096, maxSeconds: 60 },
  status: { maxRequests: 30, maxSeconds: 3 },
  policy: { warmRuns: 200, coldRuns: 3 },
  archiveRepeats: 1,
  sse: { ...SSE_PLAN, commits: 40, warmup: 6, maxSeconds: 20, deliverySeconds: 20 },
  webhooks: { ...WEBHOOK_PLAN, commits: 50, maxSeconds: 20, deliverySeconds: 60 },
  ci: {
    ...CI_PLAN,
    jobs: 300,
    warmupJobs: 32,
    maxSeconds: 20,
    commits: 40,
    warmupCommits: 5,
    commitMaxSeconds: 20,
    webhookPosts: 40,
    burstCommits: 200,
    burstWaitSeconds: 60,
  },
};
