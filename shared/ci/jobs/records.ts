import type { TriggerType } from "../config/triggers.ts";

export const jobStatuses = ["queued", "claimed", "passed", "failed"] as const;
export type JobStatus = (typeof jobStatuses)[number];
/** What a worker may report at complete. */
export const finalStatuses = ["passed", "failed"] as const;
export type FinalStatus = (typeof finalStatuses)[number];

/** The wire shape of a CI job (SPEC "CI job (scheduler record)"); the request token never appears. */
export interface JobRecord {
  id: string;
  repo: string;
  branch: string;
  sequence: number;
  status: JobStatus;
  trigger_type: TriggerType;
  trigger_branch: string;
  trigger_base_branch: string | null;
  trigger_proposal_id: string | null;
  checks: string[];
  attempt: number;
  created_by: string;
  created_at: Date;
  queued_at: Date;
  claimed_at: Date | null;
  claimed_by: string | null;
  last_heartbeat_at: Date | null;
  completed_at: Date | null;
  error: string | null;
}

/** The columns of `ci_jobs j` joined with `repos r` that make a JobRecord (plus the ids). */
export const job_columns = `
  j.id::text, r.name AS repo, j.trigger_branch AS branch, j.sequence, j.status, j.trigger_type,
  j.trigger_branch, j.trigger_base_branch, j.trigger_proposal_id::text, j.checks, j.attempt,
  j.created_by, j.created_at, j.queued_at, j.claimed_at, j.claimed_by, j.last_heartbeat_at,
  j.completed_at, j.error, j.repo_id, j.branch_id`;

/** A job row as selected with `job_columns`. */
export type JobRow = JobRecord & { repo_id: number; branch_id: number };

export const toJobRecord = ({ repo_id: _r, branch_id: _b, ...record }: JobRow): JobRecord => record;
