import { findRepoAccess } from "../../access/roles.ts";
import { presignArchiveUrl } from "../../archives/presign.ts";
import type { Actor } from "../../auth/actor.ts";
import type { AppContext } from "../../context.ts";
import { fail } from "../../errors.ts";
import { publicUrl, tokenExchangeUrl } from "../urls.ts";
import type { WorkerIdentity } from "../worker/index.ts";
import { claimOldest, complete, findJob, heartbeat } from "./queue.ts";
import { type FinalStatus, type JobRecord, type JobRow, toJobRecord } from "./records.ts";
import { newRequestToken } from "./request-token.ts";

/**
 * The scheduler's operations on jobs, one per endpoint. The request token has already been
 * resolved to its claimed job by the dispatcher (`requestToken` access); what is checked here is
 * that the job is the one the path names.
 */

/** What a claim answers: the job, its one-time request token and where to exchange it. */
export type Claim = JobRecord & { request_token: string; oidc_token_url: string; api_url: string };

/** `POST /claim`: the oldest queued job, now claimed by `worker`, or null when none is queued. */
export async function claimJob(ctx: AppContext, worker: WorkerIdentity): Promise<Claim | null> {
  const { token, hash } = newRequestToken();
  const job = await claimOldest(ctx.pool, { worker: worker.worker, tokenHash: hash, now: ctx.clock.now() });
  if (!job) return null;
  ctx.log.info(
    { job_id: job.id, repo: job.repo, attempt: job.attempt, worker: worker.worker },
    "ci job claimed",
  );
  return {
    ...toJobRecord(job),
    request_token: token,
    oidc_token_url: tokenExchangeUrl(ctx),
    api_url: publicUrl(ctx),
  };
}

/** The request token of one job says nothing about another: the same 401 as a bad token. */
function requireSameJob(job: JobRow, pathId: string): void {
  if (job.id !== pathId) fail("UNAUTHENTICATED", "the request token is missing, invalid or expired");
}

/** `POST /jobs/{id}/heartbeat`. */
export async function heartbeatJob(ctx: AppContext, job: JobRow, pathId: string) {
  requireSameJob(job, pathId);
  const row = await heartbeat(ctx.pool, { jobId: job.id, attempt: job.attempt, now: ctx.clock.now() });
  if (!row) fail("UNAUTHENTICATED", "the request token is missing, invalid or expired");
  return { id: row.id, status: row.status, last_heartbeat_at: row.last_heartbeat_at };
}

/** `POST /jobs/{id}/complete`: the final status; the request token stops working. */
export async function completeJob(
  ctx: AppContext,
  job: JobRow,
  pathId: string,
  result: { status: FinalStatus; error?: string | undefined },
): Promise<JobRecord> {
  requireSameJob(job, pathId);
  const row = await complete(ctx.pool, {
    jobId: job.id,
    attempt: job.attempt,
    status: result.status,
    error: result.error ?? null,
    now: ctx.clock.now(),
  });
  if (!row) fail("UNAUTHENTICATED", "the request token is missing, invalid or expired");
  ctx.log.info({ job_id: row.id, status: row.status }, "ci job completed");
  return toJobRecord(row);
}

/** A request token is bound to one repo: `{name}` in the path must be it. */
export function requireJobRepo(job: JobRow, repo: string): void {
  if (job.repo !== repo)
    fail("FORBIDDEN", `this request token is bound to repo '${job.repo}', not '${repo}'`);
}

/** `POST /repos/{name}/-/archive/presign`: a one-hour URL of the job's tree at its pinned sequence. */
export async function presignJobArchive(ctx: AppContext, job: JobRow, repo: string) {
  requireJobRepo(job, repo);
  const url = await presignArchiveUrl(
    ctx,
    { repo: job.repo, branch: job.branch, sequence: job.sequence, baseUrl: publicUrl(ctx) },
    ctx.clock.now().getTime(),
  );
  return { url };
}

/** `GET /run/{id}`: the job, for whoever may read its repo (404 for anyone else, as if absent). */
export async function getRun(ctx: AppContext, actor: Actor, id: string): Promise<JobRecord> {
  const job = await readableJob(ctx, actor, id);
  return toJobRecord(job);
}

/** A job whose repo `actor` may read; JOB_NOT_FOUND otherwise. */
export async function readableJob(ctx: AppContext, actor: Actor, id: string): Promise<JobRow> {
  // The scheduler's status and log pages are for people; a job token reads its repo only.
  if (actor.job) fail("FORBIDDEN", "a CI job token may only read its repo and report check runs");
  const job = await findJob(ctx.pool, id);
  const access = job ? await findRepoAccess(ctx.pool, job.repo, actor) : null;
  if (!job || !access?.role) fail("JOB_NOT_FOUND", `job '${id}' not found`);
  return job;
}
