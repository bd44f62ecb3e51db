import type { RepoAccess } from "../../access/roles.ts";
import { requireBranch } from "../../branches/branches.ts";
import type { CheckStatus } from "../../checks/names.ts";
import type { Queryable } from "../../db/pool.ts";
import { fail } from "../../errors.ts";
import { type JobRow, job_columns } from "./records.ts";

/**
 * What the web interface shows of CI (docs/web.md, "CI"): a repo's runs (jobs) newest first, one
 * run's checks with their logs, and one check's results across the sequences of a branch. Reads
 * only; a reader of the repo may see all of it, as `GET /run/{id}` and the check runs' API.
 */

/** A run as listed: the job and the author of the commit it tests (who pushed it). */
export type RunRow = JobRow & { commit_author: string | null };

const run_select = `
  SELECT ${job_columns}, c.author AS commit_author
  FROM ci_jobs j JOIN repos r ON r.id = j.repo_id
  LEFT JOIN commits c ON c.repo_id = j.repo_id AND c.sequence = j.sequence`;

// Keyset paging on the `ci_jobs_by_repo (repo_id, created_at DESC)` index: `before` is the last
// run of the previous page, so a run queued meanwhile never shifts a page.
const job_select_by_repo = `${run_select}
  WHERE j.repo_id = $1
    AND ($2::uuid IS NULL OR (j.created_at, j.id) <
         (SELECT b.created_at, b.id FROM ci_jobs b WHERE b.id = $2::uuid AND b.repo_id = $1))
  ORDER BY j.created_at DESC, j.id DESC
  LIMIT $3`;

/** A page of a repo's runs, newest first, after the run `before` (an id on the previous page). */
export async function listRuns(
  db: Queryable,
  access: RepoAccess,
  q: { before?: string | undefined; limit: number },
): Promise<RunRow[]> {
  const { rows } = await db.query<RunRow>(job_select_by_repo, [access.repo.id, q.before ?? null, q.limit]);
  return rows;
}

const job_select_in_repo = `${run_select}
  WHERE j.id = $1::uuid AND j.repo_id = $2`;

/** A run of this repo; JOB_NOT_FOUND for a job of another repo, as for one that does not exist. */
export async function requireRun(db: Queryable, access: RepoAccess, id: string): Promise<RunRow> {
  const { rows } = await db.query<RunRow>(job_select_in_repo, [id, access.repo.id]);
  if (!rows[0]) fail("JOB_NOT_FOUND", `run '${id}' not found in ${access.repo.name}`);
  return rows[0];
}

/** One check of a run: its latest report at the run's sequence (none yet: null) and its log. */
export interface RunCheck {
  check_name: string;
  status: CheckStatus | null;
  /** The first report (the worker's `pending` when the check started) and the last. */
  reported_at: Date | null;
  updated_at: Date | null;
  /** Size of the uploaded log; null until the worker uploads it, after the check has ended. */
  log_bytes: number | null;
}

// A run's checks are the job's list, plus any check that has a log without being listed (the
// `ci/config` log of a run refused for an invalid file). Check runs are kept per branch, sequence
// and name, so two runs of one sequence (a push and a manual run) show the same, latest, report.
const run_checks_select = `
  WITH names AS (
    SELECT unnest($3::text[]) AS check_name
    UNION SELECT check_name FROM ci_logs WHERE job_id = $4::uuid)
  SELECT n.check_name, cr.status, cr.created_at AS reported_at, cr.updated_at, l.bytes::int AS log_bytes
  FROM names n
  LEFT JOIN check_runs cr ON cr.branch_id = $1 AND cr.sequence = $2 AND cr.check_name = n.check_name
  LEFT JOIN ci_logs l ON l.job_id = $4::uuid AND l.check_name = n.check_name
  ORDER BY n.check_name`;

/** The checks of a run, by name. */
export async function runChecks(db: Queryable, job: JobRow): Promise<RunCheck[]> {
  const { rows } = await db.query<RunCheck>(run_checks_select, [
    job.branch_id,
    job.sequence,
    job.checks,
    job.id,
  ]);
  return rows;
}

/** One check's result at one sequence of a branch, with the runs that tested that sequence. */
export interface CheckAtSequence {
  sequence: number;
  status: CheckStatus;
  reported_at: Date;
  updated_at: Date;
  reporter: string;
  /** Runs at this sequence that list the check, newest first. */
  runs: string[];
}

const check_history_select = `
  SELECT cr.sequence, cr.status, cr.created_at AS reported_at, cr.updated_at, cr.reporter,
    ARRAY(SELECT j.id::text FROM ci_jobs j
          WHERE j.repo_id = cr.repo_id AND j.branch_id = cr.branch_id AND j.sequence = cr.sequence
            AND cr.check_name = ANY (j.checks)
          ORDER BY j.created_at DESC) AS runs
  FROM check_runs cr
  WHERE cr.branch_id = $1 AND cr.check_name = $2 AND ($3::bigint IS NULL OR cr.sequence < $3)
  ORDER BY cr.sequence DESC
  LIMIT $4`;

/** A check's results on a branch, newest sequence first, below `before` when given. */
export async function checkHistory(
  db: Queryable,
  access: RepoAccess,
  q: { branch: string; check: string; before?: number | undefined; limit: number },
): Promise<CheckAtSequence[]> {
  const branch = await requireBranch(db, access.repo.id, q.branch);
  const { rows } = await db.query<CheckAtSequence>(check_history_select, [
    branch.id,
    q.check,
    q.before ?? null,
    q.limit,
  ]);
  return rows;
}
