import type pg from "pg";
import { RUNNER_SUBSCRIPTION } from "../../shared/ci/scheduler/webhook.ts";
import type { QuireClient } from "../client.ts";
import { withDb } from "../database.ts";
import { commit, createBranch, createRepo, headOf } from "../fixtures.ts";
import { type LoadResult, percentile, runLoad } from "../load.ts";
import { progress } from "../log.ts";
import type { QuireProcess } from "../server.ts";
import {
  type BurstResult,
  burstIntake,
  type CommitToClaimResult,
  commitToClaimable,
  type LatencyPlan,
  type WebhookHandlingResult,
  webhookHandling,
} from "./ci-latency.ts";
import {
  type Claim,
  drain,
  finishAll,
  finishClaimed,
  message,
  queuedAtLeast,
  webhookPoster,
  workerClient,
} from "./ci-worker.ts";
import type { PhaseRun } from "./webhooks.ts";

/**
 * The CI scheduler (docs/ci-scheduler.md) as a worker sees it, on a server started with RUNNER_URL
 * set to itself and a static worker token (`startQuire({ ci: true })`):
 *
 * - claims: `jobs` manual runs queued (`POST /repos/{name}/-/ci/run`), then `claimers` workers
 *   looping `POST /claim` until it answers 204. Claims per second, and proof that no job was
 *   claimed twice (the ids answered, and `attempt` in the database).
 * - commit to claimable (ci-latency.ts): one commit at a time to a branch whose `.svc/ci.yaml`
 *   runs on push, one worker polling `/claim`; from the commit's response to the claim that
 *   answers its job. The path: commit → NOTIFY → local webhook worker → signed POST /webhook →
 *   `.svc/ci.yaml` read at the commit → job row. Then `/webhook` on its own, posted by the bench.
 * - intake burst (ci-latency.ts): commits from 16 clients, and how fast their push jobs are queued.
 */

export interface CiPlan extends LatencyPlan {
  /** Manual runs queued for the claim loop. */
  jobs: number;
  claimers: number;
  /** Queued and claimed first, untimed: they warm the manual-run and claim paths. */
  warmupJobs: number;
  /** Cap on queuing, and on claiming. */
  maxSeconds: number;
  /** Signed deliveries posted straight to /webhook. */
  webhookPosts: number;
  /** Commits of the intake burst (16 clients), and the cap on waiting for their jobs. */
  burstCommits: number;
  burstWaitSeconds: number;
}

export const CI_PLAN: CiPlan = {
  jobs: 2_000,
  claimers: 16,
  warmupJobs: 100,
  maxSeconds: 60,
  commits: 200,
  warmupCommits: 10,
  pollMs: 2,
  pauseMs: 20,
  commitMaxSeconds: 60,
  jobWaitSeconds: 10,
  webhookPosts: 200,
  burstCommits: 1_000,
  burstWaitSeconds: 120,
};

export interface ClaimResult extends LoadResult {
  claimers: number;
  /** Jobs queued, and the 204s that ended each claimer's loop. */
  queued: number;
  empty: number;
  /** Ids answered more than once (each extra answer counts), and jobs with attempt > 1. */
  doubleClaims: number;
  retried: number;
  /** Queued jobs no claim answered. */
  unclaimed: number;
}

export interface CiBenchResult {
  repo: string;
  /** The manual runs that filled the queue, 16 clients. */
  queue: LoadResult;
  claims: ClaimResult;
  commitToClaim: CommitToClaimResult;
  webhook: WebhookHandlingResult;
  burst: BurstResult;
}

const REPO = "ci";
const BRANCH = "ci-latency";
const CONFIG = [
  "on:\n  push:\n",
  "checks:\n  - name: bench/noop\n    image: alpine:3.20\n    steps:\n      - echo ok\n",
].join("");

/**
 * Creates the CI repo and narrows the scheduler's subscription (registered at start, global) to
 * it, before any other scenario commits: otherwise every commit of the run would also be
 * delivered to `/webhook` and read for a `.svc/ci.yaml`, and the other figures would pay for it.
 */
export async function createCiRepo(server: QuireProcess, q: QuireClient): Promise<string> {
  if (!server.workerToken) throw new Error("the CI scenarios need a server started with ci: true");
  const repo = await createRepo(q, REPO);
  const { rowCount } = await withDb(server.databaseUrl, (db) =>
    db.query(
      `UPDATE subscriptions s SET repo = r.name, repo_id = r.id FROM repos r
       WHERE r.name = $1 AND s.system_name = $2`,
      [repo, RUNNER_SUBSCRIPTION],
    ),
  );
  if (rowCount !== 1) throw new Error("the CI scheduler's subscription (RUNNER_URL) is not registered");
  return repo;
}

/**
 * Runs every part on `repo` (from createCiRepo, which nothing else commits to): puts the
 * configuration on main (its push queues one job, which proves the webhook path works, and is
 * drained), then the claims, commit to claimable on a branch of main, and `/webhook` alone.
 */
export async function measureCi(
  server: QuireProcess,
  q: QuireClient,
  repo: string,
  plan: CiPlan,
  run: PhaseRun,
): Promise<CiBenchResult> {
  const { workerToken } = server;
  if (!workerToken) throw new Error("the CI scenarios need a server started with ci: true");
  const claim = workerClient(server.url, workerToken);
  return withDb(server.databaseUrl, async (db) => {
    await commit(q, repo, "main", "add CI", [{ path: ".svc/ci.yaml", text: CONFIG }]);
    if (!(await queuedAtLeast(db, 1, plan.jobWaitSeconds)))
      throw new Error(`ci: the push of .svc/ci.yaml queued no job within ${plan.jobWaitSeconds} s`);
    await drain(db, claim, repo);
    await createBranch(q, repo, BRANCH);

    progress(`ci: ${plan.warmupJobs} warmup jobs, then ${plan.jobs} jobs for ${plan.claimers} claimers`);
    await queueRuns(q, repo, plan.warmupJobs, plan.maxSeconds);
    await claimAll(claim, plan.claimers, plan.maxSeconds);
    await finishClaimed(db, repo);
    const queued = await run(
      "ci: queue manual runs",
      () => queueRuns(q, repo, plan.jobs, plan.maxSeconds),
      (r) => r.ids.length + r.result.errors,
    );
    // The 2,000 fresh rows would otherwise be vacuumed by autovacuum in the middle of the claims.
    await db.query("VACUUM (ANALYZE) ci_jobs");
    const claimed = await run(
      "ci: claims",
      () => claimAll(claim, plan.claimers, plan.maxSeconds),
      (r) => r.result.requests + r.empty + r.result.errors,
    );
    const claims = await checkClaims(db, plan.claimers, queued.ids, claimed);
    await finishClaimed(db, repo);

    progress(`ci: commit to claimable, ${plan.commits} commits, a worker polling every ${plan.pollMs} ms`);
    const target = { repo, branch: BRANCH };
    const commitToClaim = await run(
      "ci: commit to claimable (per commit)",
      () => commitToClaimable(db, q, claim, target, plan),
      (r) => r.commits + plan.warmupCommits,
    );
    const post = await webhookPoster(server.url, db);
    const event = { ...target, sequence: await headOf(q, repo, BRANCH) };
    const webhook = await run(
      "ci: POST /webhook",
      () => webhookHandling(post, event, plan.webhookPosts),
      (r) => r.posts + r.errors,
    );
    await drain(db, claim, repo);

    progress(`ci: intake burst of ${plan.burstCommits} commits from 16 clients`);
    for (let w = 0; w < 16; w++) await createBranch(q, repo, `burst-${String(w).padStart(2, "0")}`);
    const burst = await run(
      "ci: intake burst (per commit)",
      () => burstIntake(db, q, repo, plan),
      (r) => r.commits,
    );
    await finishAll(db, repo);
    return { repo, queue: queued.result, claims, commitToClaim, webhook, burst };
  });
}

/** Queues `n` manual runs of main from 16 clients; the ids of the jobs queued. */
async function queueRuns(q: QuireClient, repo: string, n: number, maxSeconds: number) {
  const ids: string[] = [];
  const result = await runLoad({
    label: "ci manual runs",
    concurrency: 16,
    maxRequests: n,
    maxSeconds,
    send: async () => {
      ids.push(
        (await q.post("/repos/:repo*/-/ci/run", { params: { repo }, body: { branch: "main" } })).run_id,
      );
    },
  });
  return { ids, result };
}

/** `claimers` loops of `POST /claim`, each until a 204; every answer's job id and latency. */
async function claimAll(claim: Claim, claimers: number, maxSeconds: number) {
  const ids = new Map<string, number>();
  const latencies: number[] = [];
  let empty = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  let last = start;
  const deadline = start + maxSeconds * 1000;
  const claimer = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const res = await claim();
        if (!res.job) {
          empty++;
          return;
        }
        latencies.push(res.at - t0);
        last = Math.max(last, res.at);
        ids.set(res.job.id, (ids.get(res.job.id) ?? 0) + 1);
      } catch (err) {
        errors++;
        firstError ??= message(err);
      }
    }
  };
  await Promise.all(Array.from({ length: claimers }, claimer));
  latencies.sort((a, b) => a - b);
  const seconds = (last - start) / 1000;
  const result: LoadResult = {
    requests: latencies.length,
    warmup: 0,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    seconds,
    perSecond: seconds > 0 ? latencies.length / seconds : 0,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    meanMs: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length),
    maxMs: latencies.at(-1) ?? 0,
  };
  return { ids, empty, result };
}

const jobs_check = `
  SELECT count(*) FILTER (WHERE attempt > 1)::int AS retried,
         count(*) FILTER (WHERE status <> 'claimed')::int AS unclaimed
  FROM ci_jobs WHERE id = ANY ($1::uuid[])`;

/**
 * Every queued job answered exactly once, at its first attempt: a job answered twice, a job with
 * attempt > 1, a queued job left unclaimed or a claimed job this loop did not queue each counts
 * as an error of the row, so the run exits 1.
 */
async function checkClaims(
  db: pg.Client,
  claimers: number,
  queued: string[],
  claimed: Awaited<ReturnType<typeof claimAll>>,
): Promise<ClaimResult> {
  const doubleClaims = [...claimed.ids.values()].reduce((sum, n) => sum + n - 1, 0);
  const { retried, unclaimed } = (await db.query(jobs_check, [queued])).rows[0];
  const mine = new Set(queued);
  const foreign = [...claimed.ids.keys()].filter((id) => !mine.has(id)).length;
  const problems = [
    doubleClaims > 0 ? `${doubleClaims} DOUBLE CLAIMS` : "",
    retried > 0 ? `${retried} jobs with attempt > 1` : "",
    unclaimed > 0 ? `${unclaimed} queued jobs not claimed` : "",
    foreign > 0 ? `${foreign} claimed jobs that were not queued by this loop` : "",
  ].filter(Boolean);
  for (const p of problems) progress(`ci claims: ${p}`);
  const r = claimed.result;
  return {
    ...r,
    errors: r.errors + doubleClaims + retried + unclaimed + foreign,
    ...(r.firstError === undefined && problems[0] ? { firstError: problems[0] } : {}),
    claimers,
    queued: queued.length,
    empty: claimed.empty,
    doubleClaims,
    retried,
    unclaimed,
  };
}
