import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import type { QuireClient } from "../client.ts";
import { commit } from "../fixtures.ts";
import { percentile, runLoad } from "../load.ts";
import {
  type Answer,
  type Claim,
  finishClaimed,
  message,
  queuedJobs,
  type webhookPoster,
} from "./ci-worker.ts";

/** How the commit-to-claimable loop runs (part of CiPlan). */
export interface LatencyPlan {
  /** Measured commits, after `warmupCommits` untimed ones. */
  commits: number;
  warmupCommits: number;
  /** The poller's wait between a 204 and its next claim. */
  pollMs: number;
  /** Pause after each sample, so each measures an idle queue. */
  pauseMs: number;
  /** Cap on the loop, and on waiting for one commit's job. */
  commitMaxSeconds: number;
  jobWaitSeconds: number;
}

const spread = (sorted: number[]) => ({ p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) });

export interface CommitToClaimResult {
  commits: number;
  pollMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Commit response → the job's queued_at (server clock, ms): the webhook path and config read. */
  toQueued: { p50Ms: number; p99Ms: number };
  /** queued_at → the poller's claim answer: polling interval and claim. */
  toClaim: { p50Ms: number; p99Ms: number };
  /** Jobs claimed before the commit's own response came back (counted as 0 ms). */
  beforeResponse: number;
  /** Failed commits, jobs that never came, and jobs that were not the commit's. */
  errors: number;
  firstError?: string;
}

/**
 * One commit at a time to `branch` (whose `.svc/ci.yaml` runs on push), with a poller started as
 * each commit is sent (a worker polls all along) that claims until a job comes: the time from the
 * commit's response to that claim's answer. The job must be the commit's (branch and sequence).
 */
export async function commitToClaimable(
  db: pg.Client,
  q: QuireClient,
  claim: Claim,
  target: { repo: string; branch: string },
  plan: LatencyPlan,
): Promise<CommitToClaimResult> {
  const total: number[] = [];
  const toQueued: number[] = [];
  const toClaim: number[] = [];
  let beforeResponse = 0;
  let errors = 0;
  let firstError: string | undefined;
  const failed = (what: string) => {
    errors++;
    firstError ??= what;
  };
  if ((await queuedJobs(db)) > 0) failed("ci: the queue was not empty before commit to claimable");
  const deadline = performance.now() + plan.commitMaxSeconds * 1000;
  for (let i = 0; i < plan.warmupCommits + plan.commits && performance.now() < deadline; i++) {
    const stop = new AbortController();
    const polled = poll(claim, plan, stop.signal);
    try {
      const files = [{ path: "notes/ci.md", text: `run ${i}\n` }];
      const sequence = await commit(q, target.repo, target.branch, `ci ${i}`, files);
      const respondedAt = performance.now();
      const respondedWall = Date.now();
      const got = await polled;
      if (!got.job) throw new Error(`no job within ${plan.jobWaitSeconds} s of commit ${sequence}`);
      if (got.job.branch !== target.branch || got.job.sequence !== sequence)
        throw new Error(`claimed ${got.job.branch}@${got.job.sequence}, not ${target.branch}@${sequence}`);
      if (i >= plan.warmupCommits) {
        if (got.at < respondedAt) beforeResponse++;
        const queuedAfter = Date.parse(got.job.queued_at) - respondedWall;
        total.push(Math.max(0, got.at - respondedAt));
        toQueued.push(queuedAfter);
        toClaim.push(got.at - respondedAt - queuedAfter);
      }
    } catch (err) {
      stop.abort();
      await polled.catch(() => undefined);
      failed(`ci commit to claimable: ${message(err)}`);
    }
    await finishClaimed(db, target.repo);
    await sleep(plan.pauseMs);
  }
  for (const list of [total, toQueued, toClaim]) list.sort((a, b) => a - b);
  return {
    commits: total.length,
    pollMs: plan.pollMs,
    ...spread(total),
    maxMs: total.at(-1) ?? 0,
    toQueued: spread(toQueued),
    toClaim: spread(toClaim),
    beforeResponse,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
  };
}

/** Claims every `pollMs` until a job comes, `signal` aborts, or `jobWaitSeconds` pass. */
async function poll(claim: Claim, plan: LatencyPlan, signal: AbortSignal): Promise<Answer> {
  const deadline = performance.now() + plan.jobWaitSeconds * 1000;
  for (;;) {
    const res = await claim();
    if (res.job || signal.aborted || performance.now() > deadline) return res;
    await sleep(plan.pollMs);
  }
}

export interface WebhookHandlingResult {
  posts: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  firstError?: string;
}

/**
 * The scheduler's own share of the path: signed commit.created deliveries posted by the bench
 * straight to `/webhook`, one at a time, each naming the branch's head under a new event id (so
 * each queues a job, drained at the end). Its round trip: verify, `.svc/ci.yaml` read, insert.
 */
export async function webhookHandling(
  post: Awaited<ReturnType<typeof webhookPoster>>,
  event: { repo: string; branch: string; sequence: number },
  posts: number,
): Promise<WebhookHandlingResult> {
  const times: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  for (let i = 0; i < posts; i++) {
    const t0 = performance.now();
    try {
      if ((await post(event)) !== 1) throw new Error("a delivery to /webhook queued no job");
      times.push(performance.now() - t0);
    } catch (err) {
      errors++;
      firstError ??= `ci /webhook: ${message(err)}`;
    }
  }
  times.sort((a, b) => a - b);
  return {
    posts: times.length,
    ...spread(times),
    errors,
    ...(firstError === undefined ? {} : { firstError }),
  };
}

export interface BurstResult {
  commits: number;
  commitsPerSecond: number;
  /** Push jobs queued by those commits, and from the first commit sent to the last one queued. */
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  /** From the last commit's response to the last job queued: how far intake fell behind. */
  lagSeconds: number;
  /** Failed commits, and jobs missing when the wait ended. */
  errors: number;
  firstError?: string;
}

const burst_jobs = `
  SELECT count(*)::int AS n, max(queued_at) AS last FROM ci_jobs
  WHERE repo_id = (SELECT id FROM repos WHERE name = $1) AND trigger_branch LIKE 'burst-%'`;

/**
 * Intake under load: `commits` commits from 16 clients, each to its own branch (created
 * beforehand), so that commits do not wait on one another; each queues one push job through the
 * scheduler's one subscription, whose deliveries go one at a time. Jobs queued per second, and
 * how long after the last commit the last job was queued. The jobs are left queued.
 */
export async function burstIntake(
  db: pg.Client,
  q: QuireClient,
  repo: string,
  plan: { burstCommits: number; maxSeconds: number; burstWaitSeconds: number },
): Promise<BurstResult> {
  const startWall = Date.now();
  const load = await runLoad({
    label: "ci burst commits",
    concurrency: 16,
    maxRequests: plan.burstCommits,
    maxSeconds: plan.maxSeconds,
    send: async (i, w) => {
      const branch = `burst-${String(w).padStart(2, "0")}`;
      await commit(q, repo, branch, `burst ${i}`, [{ path: `notes/${branch}.md`, text: `burst ${i}\n` }]);
    },
  });
  const committedWall = Date.now();
  const deadline = performance.now() + plan.burstWaitSeconds * 1000;
  let got: { n: number; last: Date | null };
  for (;;) {
    got = (await db.query(burst_jobs, [repo])).rows[0];
    if (got.n >= load.requests || performance.now() > deadline) break;
    await sleep(20);
  }
  const lastWall = got.last?.getTime() ?? committedWall;
  const seconds = (lastWall - startWall) / 1000;
  const missing = Math.max(0, load.requests - got.n);
  const firstError =
    load.firstError ??
    (missing > 0 ? `ci burst: ${missing} jobs not queued within ${plan.burstWaitSeconds} s` : undefined);
  return {
    commits: load.requests,
    commitsPerSecond: load.perSecond,
    jobs: got.n,
    seconds,
    jobsPerSecond: seconds > 0 ? got.n / seconds : 0,
    lagSeconds: (lastWall - committedWall) / 1000,
    errors: load.errors + missing,
    ...(firstError === undefined ? {} : { firstError }),
  };
}
