import { randomUUID } from "node:crypto";
import type { RepoAccess } from "../access/roles.ts";
import { recordAttestation } from "../attestations/attestations.ts";
import type { Actor, JobActor } from "../auth/actor.ts";
import { requireActive, requireBranch } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { upToAt } from "../reviews/at.ts";
import type { CheckStatus } from "./names.ts";
import { reporterOf } from "./reporter.ts";

/** The wire shape of a check run (spec "Check run", plus id and timestamps). */
export interface CheckRunRecord {
  id: string;
  branch: string;
  check_name: string;
  status: CheckStatus;
  log_url: string | null;
  sequence: number;
  reporter: string;
  created_at: Date;
  updated_at: Date;
}

export interface CheckRequest {
  branch: string;
  check_name: string;
  status: CheckStatus;
  log_url?: string | null | undefined;
  sequence?: number | undefined;
  /** The image a CI job's steps ran in (`sha256:…`); only a job token may name one. */
  image_digest?: string | undefined;
}

type CheckRunRow = Omit<CheckRunRecord, "branch">;

const toCheckRunRecord = (branch: string, r: CheckRunRow): CheckRunRecord => ({
  id: r.id,
  branch,
  check_name: r.check_name,
  status: r.status,
  log_url: r.log_url,
  sequence: r.sequence,
  reporter: r.reporter,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const check_run_columns = "id::text, sequence, check_name, status, log_url, reporter, created_at, updated_at";
// One row per (branch, sequence, check name): a later report replaces status, log_url and reporter
// of the earlier one; the run keeps its id and created_at, and updated_at moves.
const check_run_upsert = `
  INSERT INTO check_runs (id, repo_id, branch_id, sequence, check_name, status, log_url, reporter, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp(), clock_timestamp())
  ON CONFLICT (branch_id, sequence, check_name) DO UPDATE
    SET status = EXCLUDED.status, log_url = EXCLUDED.log_url, reporter = EXCLUDED.reporter,
        updated_at = EXCLUDED.updated_at
  RETURNING ${check_run_columns}`;
const check_runs_select = `
  SELECT ${check_run_columns} FROM check_runs
  WHERE branch_id = $1 AND sequence <= $2
  ORDER BY sequence, check_name`;

/**
 * The sequence a CI job (with its job token) reports at: about what the job tested, so only on its
 * job's branch and at its pinned sequence (the default); a job's verdict on any other state would
 * be a claim about something it never ran.
 */
function jobReportSequence(job: JobActor, input: CheckRequest): number {
  if (input.branch !== job.branch)
    fail("FORBIDDEN", `a CI job token may only report on its job's branch '${job.branch}'`);
  if (input.sequence !== undefined && input.sequence !== job.sequence)
    fail("FORBIDDEN", `a CI job token may only report at its job's sequence ${job.sequence}`);
  return job.sequence;
}

/**
 * Records a check run for a branch at `sequence` (default: its head), replacing an earlier report
 * of the same check at the same sequence. The sequence must name a state of the branch: 1 up to
 * its head. The branch row is held FOR SHARE so the head cannot move meanwhile; only active
 * branches accept check runs. The reporter comes from the caller (`reporterOf`). A CI job's
 * final verdict is also signed as an attestation in the same transaction (shared/attestations/).
 */
export async function reportCheck(
  ctx: Pick<AppContext, "pool" | "logSigner">,
  actor: Actor,
  access: RepoAccess,
  input: CheckRequest,
): Promise<CheckRunRecord> {
  const reporter = reporterOf(actor);
  const pinned = actor.job ? jobReportSequence(actor.job, input) : undefined;
  if (!actor.job && input.image_digest !== undefined)
    fail("VALIDATION_FAILED", "body.image_digest: only a CI job's report names the image its steps ran in");
  return withTx(ctx.pool, async (tx) => {
    const branch = await requireBranch(tx, access.repo.id, input.branch, "share");
    requireActive(branch);
    const sequence = pinned ?? input.sequence ?? branch.head_sequence;
    if (sequence < 1 || sequence > branch.head_sequence)
      fail(
        "SEQUENCE_OUT_OF_RANGE",
        branch.head_sequence < 1
          ? `body.sequence: '${branch.name}' has no commits yet`
          : `body.sequence: ${sequence} is not between 1 and the head of '${branch.name}' (${branch.head_sequence})`,
      );
    const { rows } = await tx.query(check_run_upsert, [
      randomUUID(),
      access.repo.id,
      branch.id,
      sequence,
      input.check_name,
      input.status,
      input.log_url ?? null,
      reporter,
    ]);
    if (actor.job)
      await recordAttestation(tx, ctx.logSigner, {
        access,
        branch,
        sequence,
        checkName: input.check_name,
        status: input.status,
        logUrl: input.log_url ?? null,
        job: actor.job,
        imageDigest: input.image_digest?.slice("sha256:".length) ?? null,
      });
    await recordEvent(
      tx,
      "com.svc.check.reported",
      {
        repo: access.repo.name,
        branch: branch.name,
        sequence,
        check_name: input.check_name,
        status: input.status,
        reporter,
      },
      { repo: access.repo.name },
    );
    return toCheckRunRecord(branch.name, rows[0]);
  });
}

/** The check runs of a branch at sequences at or before `at` (default: its head), by sequence then name. */
export async function listCheckRuns(
  db: Queryable,
  access: RepoAccess,
  q: { branch: string; at?: number },
): Promise<CheckRunRecord[]> {
  const branch = await requireBranch(db, access.repo.id, q.branch);
  const { rows } = await db.query(check_runs_select, [branch.id, upToAt(branch, q.at)]);
  return rows.map((r) => toCheckRunRecord(branch.name, r));
}
