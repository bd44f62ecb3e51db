import { issueJobToken } from "../../../shared/ci/identity/issue.ts";
import type { JobRow } from "../../../shared/ci/jobs/records.ts";
import { ManualClock } from "../../../shared/clock.ts";
import { startTestApp, type TestApp } from "../../support/app.ts";
import { type Client, client } from "../../support/client.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner } from "../../support/world.ts";
import { queueAndClaim } from "../support.ts";

export interface JobTokenApp extends TestApp {
  clock: ManualClock;
  /** A client that sends `token` as its bearer. */
  bearer(token: string): Client;
}

/**
 * A test app with a manual clock (job tokens expire by it) and no CI timers, so no reaper re-queues
 * a job behind a test's back, and no RUNNER_URL, so commits queue no jobs: every job here is made
 * by `claimedJob`.
 */
export async function startJobTokenApp(env: Record<string, string> = {}): Promise<JobTokenApp> {
  const clock = new ManualClock(new Date());
  const app = await startTestApp({ SVC_CI_TIMERS: "false", ...env }, { context: { clock } });
  return { ...app, clock, bearer: (token) => client(app.url, async () => token) };
}

/**
 * A job queued for `branch` of the fixture's repo at its current head and claimed at once, as the
 * scheduler's queue does it (the test's jobs are the only ones, so the oldest queued is this one).
 */
export async function claimedJob(app: JobTokenApp, fx: RepoFixture, branch: string): Promise<JobRow> {
  return (await queueAndClaim(app, fx.repo, branch, { checks: ["docs/lint"], createdBy: fx.owner })).job;
}

/** A job JWT for `job` from the real token issuer (audit row included), audience `quire` unless given. */
export function mint(
  app: JobTokenApp,
  job: JobRow,
  request: { audience?: string; check_name?: string } = {},
): Promise<string> {
  return issueJobToken(app.server.ctx, job, { audience: "quire", ...request });
}

/** The `.svc/ci.yaml` of `jobOnFeature`'s repo: one check, docs/lint. */
export const CI_YAML =
  "checks:\n  - name: docs/lint\n    image: alpine:3.20\n    steps:\n      - echo lint\n";

/**
 * A repo whose main has CI_YAML and docs/a.md, a branch `feature` with docs/b.md, and a job of
 * that branch claimed at its head, with a client that sends the job's JWT.
 */
export async function jobOnFeature(
  app: JobTokenApp,
  fx?: RepoFixture,
): Promise<{ fx: RepoFixture; job: JobRow; jwt: Client }> {
  const repo = fx ?? (await repoWithOwner(app));
  await commit(repo, "main", { ".svc/ci.yaml": CI_YAML, "docs/a.md": "# A\n" }, "first");
  await createBranch(repo, "feature");
  await commit(repo, "feature", { "docs/b.md": "# B\n" }, "on feature");
  const job = await claimedJob(app, repo, "feature");
  return { fx: repo, job, jwt: app.bearer(await mint(app, job)) };
}
