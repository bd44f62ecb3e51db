import { randomUUID } from "node:crypto";
import { firstRowOf, prepared, type Queryable } from "../../db/pool.ts";
import type { TriggerType } from "../config/triggers.ts";
import { type FinalStatus, type JobRow, job_columns } from "./records.ts";

/**
 * The job queue in PostgreSQL. Every transition is one statement, so it is atomic without a
 * transaction of its own, and the request token's hash moves with the state: it is set by the
 * claim and cleared by completion and by the reaper (a CHECK keeps `claimed` ⇔ a token).
 */

/** A claimed job whose last heartbeat is older than this goes back to the queue (DESIGN, CI). */
export const STALE_AFTER_MS = 2 * 60_000;
/** How often the reaper looks (SPEC, Limits). */
export const REAP_EVERY_MS = 30_000;
/**
 * Claims a job may have. A job that kills every worker that takes it (out of memory, a node that
 * dies) would otherwise circle the queue for ever; after this many stale claims it fails.
 */
export const MAX_ATTEMPTS = 5;

/** What a trigger decided to queue. */
export interface NewJob {
  repoId: number;
  branchId: number;
  sequence: number;
  triggerType: TriggerType;
  triggerBranch: string;
  triggerBaseBranch: string | null;
  triggerProposalId: string | null;
  /** Deduplicates redelivered triggers; null for manual runs. */
  triggerKey: string | null;
  checks: string[];
  createdBy: string;
  now: Date;
  /** A record of a run that fails before any worker sees it (an invalid configuration): why. */
  failed?: string;
}

const job_insert = `
  INSERT INTO ci_jobs (id, repo_id, branch_id, sequence, trigger_type, trigger_branch,
    trigger_base_branch, trigger_proposal_id, trigger_key, checks, created_by, queued_at, created_at,
    status, error, completed_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::timestamptz, $12::timestamptz,
    CASE WHEN $13::text IS NULL THEN 'queued' ELSE 'failed' END, $13, CASE WHEN $13::text IS NOT NULL THEN $12::timestamptz END)
  ON CONFLICT (trigger_key) DO NOTHING
  RETURNING id::text`;

/** Queues a job; returns its id, or null when the same trigger already queued one. */
export async function enqueueJob(db: Queryable, job: NewJob): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(job_insert, [
    randomUUID(),
    job.repoId,
    job.branchId,
    job.sequence,
    job.triggerType,
    job.triggerBranch,
    job.triggerBaseBranch,
    job.triggerProposalId,
    job.triggerKey,
    job.checks,
    job.createdBy,
    job.now,
    job.failed ?? null,
  ]);
  return rows[0]?.id ?? null;
}

// The worker protocol's statements are prepared: planning the claim cost as much as running it.
// The oldest queued job, locked with SKIP LOCKED so concurrent claimers each take a different row
// without waiting on one another; a re-queued job keeps its queued_at and so is first in line.
const job_claim_oldest = prepared<JobRow>(
  "job_claim_oldest",
  `
  WITH next AS (
    SELECT id FROM ci_jobs WHERE status = 'queued'
    ORDER BY queued_at, id LIMIT 1
    FOR UPDATE SKIP LOCKED)
  UPDATE ci_jobs j
  SET status = 'claimed', attempt = j.attempt + 1, claimed_at = $1, claimed_by = $2,
      last_heartbeat_at = $1, request_token_sha256 = $3
  FROM next, repos r
  WHERE j.id = next.id AND r.id = j.repo_id
  RETURNING ${job_columns}`,
);

/** Claims the oldest queued job for `worker`, binding it to the token hash; null when none is queued. */
export async function claimOldest(
  db: Queryable,
  input: { worker: string; tokenHash: Buffer; now: Date },
): Promise<JobRow | null> {
  return (await firstRowOf(db, job_claim_oldest([input.now, input.worker, input.tokenHash]))) ?? null;
}

const job_update_heartbeat = prepared<JobRow>(
  "job_update_heartbeat",
  `
  UPDATE ci_jobs j SET last_heartbeat_at = $3
  FROM repos r
  WHERE j.id = $1 AND j.status = 'claimed' AND j.attempt = $2 AND r.id = j.repo_id
  RETURNING ${job_columns}`,
);

/**
 * Records a heartbeat of claim `attempt` of the job (the claim whose request token the caller
 * showed); null when that claim has ended, by completion or the reaper.
 */
export async function heartbeat(
  db: Queryable,
  input: { jobId: string; attempt: number; now: Date },
): Promise<JobRow | null> {
  return (await firstRowOf(db, job_update_heartbeat([input.jobId, input.attempt, input.now]))) ?? null;
}

const job_update_completed = prepared<JobRow>(
  "job_update_completed",
  `
  UPDATE ci_jobs j
  SET status = $3, error = $4, completed_at = $5, last_heartbeat_at = $5, request_token_sha256 = NULL
  FROM repos r
  WHERE j.id = $1 AND j.status = 'claimed' AND j.attempt = $2 AND r.id = j.repo_id
  RETURNING ${job_columns}`,
);

/** Completes the job as claim `attempt` of it; its request token stops working. */
export async function complete(
  db: Queryable,
  input: { jobId: string; attempt: number; status: FinalStatus; error: string | null; now: Date },
): Promise<JobRow | null> {
  const completed = job_update_completed([input.jobId, input.attempt, input.status, input.error, input.now]);
  return (await firstRowOf(db, completed)) ?? null;
}

// Stale claims go back to the queue (their token cleared, so the old worker's heartbeat, complete
// and token exchange all get 401), or fail once they have used up their attempts.
const job_update_reaped = `
  UPDATE ci_jobs
  SET status = CASE WHEN attempt >= $2 THEN 'failed' ELSE 'queued' END,
      error = CASE WHEN attempt >= $2
                THEN 'no heartbeat for ' || $3::text || ' seconds from any of ' || attempt || ' workers'
              END,
      completed_at = CASE WHEN attempt >= $2 THEN $4::timestamptz END,
      request_token_sha256 = NULL, claimed_at = NULL, claimed_by = NULL
  WHERE status = 'claimed' AND last_heartbeat_at < $1
  RETURNING id::text, status`;

/** Re-queues claimed jobs with no heartbeat for STALE_AFTER_MS; returns what it did. */
export async function reapStale(db: Queryable, now: Date): Promise<{ requeued: string[]; failed: string[] }> {
  const { rows } = await db.query<{ id: string; status: "queued" | "failed" }>(job_update_reaped, [
    new Date(now.getTime() - STALE_AFTER_MS),
    MAX_ATTEMPTS,
    String(STALE_AFTER_MS / 1000),
    now,
  ]);
  return {
    requeued: rows.filter((r) => r.status === "queued").map((r) => r.id),
    failed: rows.filter((r) => r.status === "failed").map((r) => r.id),
  };
}

const job_select = `SELECT ${job_columns} FROM ci_jobs j JOIN repos r ON r.id = j.repo_id WHERE j.id = $1`;

/** One job, or null. */
export async function findJob(db: Queryable, id: string): Promise<JobRow | null> {
  const { rows } = await db.query<JobRow>(job_select, [id]);
  return rows[0] ?? null;
}
