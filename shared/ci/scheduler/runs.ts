import type { RepoAccess, RepoRow } from "../../access/roles.ts";
import type { BranchRow } from "../../branches/branches.ts";
import { reportCheck } from "../../checks/checks.ts";
import type { AppContext } from "../../context.ts";
import { withTx } from "../../db/tx.ts";
import { DomainError } from "../../errors.ts";
import { CONFIG_ERROR_CHECK, describeConfigErrors } from "../config/file.ts";
import type { CiDelivery, TriggerType } from "../config/triggers.ts";
import { storeLog } from "../jobs/logs.ts";
import { enqueueJob } from "../jobs/queue.ts";
import { configAt } from "./config-at.ts";

/** Who the scheduler acts as: the creator of triggered jobs and the reporter of `ci/config`. */
export const SCHEDULER_IDENTITY = "ci-scheduler";

/** A state of a branch that something asks CI to test. */
export interface RunRequest {
  repo: RepoRow;
  branch: BranchRow;
  /** The pinned sequence: the head the trigger names. */
  sequence: number;
  delivery: CiDelivery;
  /** The proposal behind a proposal or proposal_synchronized job. */
  proposal: { id: string; base_branch: string } | null;
  /** Deduplicates redeliveries: jobs get `<key>:<trigger type>`; null for manual runs. */
  key: string | null;
  createdBy: string;
}

/** What a request came to. */
export type RunOutcome =
  | { kind: "absent" }
  | { kind: "invalid"; jobId: string | null }
  | { kind: "queued"; jobs: { id: string; trigger_type: TriggerType }[] };

/**
 * Queues the jobs a trigger asks for, reading `.svc/ci.yaml` of the branch under test at the
 * pinned sequence: one job per trigger type that matches and has at least one check whose `if:`
 * holds (a job that would post nothing is not queued). No file: nothing. An invalid file: no job
 * to run; instead a failed job record and a failed `ci/config` check run whose log lists every
 * problem (see `reportInvalidConfig`). All jobs of one request are queued in one transaction.
 */
export async function requestRuns(ctx: AppContext, req: RunRequest): Promise<RunOutcome> {
  const config = await configAt(ctx.pool, ctx.blobs, req.repo.id, req.branch, req.sequence);
  if (config.kind === "absent") return { kind: "absent" };
  if (config.kind === "invalid") {
    // The push that brought the file in already reported it; the cron runner stays quiet.
    if (req.delivery.kind === "schedule") return { kind: "invalid", jobId: null };
    const problems = describeConfigErrors(config.errors);
    return { kind: "invalid", jobId: await reportInvalidConfig(ctx, req, problems) };
  }
  // Loaded with the parser, which a valid configuration has already loaded (config-at.ts).
  const { checksToRun, triggersFor } = await import("../config/triggers.ts");
  const now = ctx.clock.now();
  const jobs = await withTx(ctx.pool, async (tx) => {
    const queued: { id: string; trigger_type: TriggerType }[] = [];
    for (const type of triggersFor(config.config, req.delivery)) {
      const checks = checksToRun(config.config, {
        type,
        branch: req.branch.name,
        base_branch: req.proposal?.base_branch ?? "",
        proposal_id: req.proposal?.id ?? "",
      }).map((c) => c.name);
      if (checks.length === 0) continue;
      const id = await enqueueJob(tx, {
        ...jobFields(req, type, now),
        triggerKey: req.key === null ? null : `${req.key}:${type}`,
        checks,
      });
      if (id !== null) queued.push({ id, trigger_type: type });
    }
    return queued;
  });
  return { kind: "queued", jobs };
}

function jobFields(req: RunRequest, type: TriggerType, now: Date) {
  const proposal = type === "proposal" || type === "proposal_synchronized" ? req.proposal : null;
  return {
    repoId: req.repo.id,
    branchId: req.branch.id,
    sequence: req.sequence,
    triggerType: type,
    triggerBranch: req.branch.name,
    triggerBaseBranch: proposal?.base_branch ?? null,
    triggerProposalId: proposal?.id ?? null,
    createdBy: req.createdBy,
    now,
  };
}

const configErrorTrigger: Record<CiDelivery["kind"], TriggerType> = {
  "commit.created": "push",
  "proposal.opened": "proposal",
  schedule: "schedule",
  manual: "manual",
};

const job_select_by_key = `SELECT id::text FROM ci_jobs WHERE trigger_key = $1`;

/**
 * Tells the author why nothing runs: a job record that failed at once (so `GET /run/{id}` and its
 * log exist), the problems as that job's `ci/config` log, and a failed `ci/config` check run on
 * the sequence pointing at the log. Each step is idempotent, so a redelivered event completes
 * whatever an interrupted earlier one left undone and duplicates nothing.
 */
async function reportInvalidConfig(ctx: AppContext, req: RunRequest, problems: string): Promise<string> {
  const type = configErrorTrigger[req.delivery.kind];
  const key = req.key === null ? null : `${req.key}:config`;
  const now = ctx.clock.now();
  const inserted = await enqueueJob(ctx.pool, {
    ...jobFields(req, type, now),
    triggerKey: key,
    checks: [],
    failed: `invalid ${CONFIG_ERROR_CHECK}: see the ${CONFIG_ERROR_CHECK} log`,
  });
  const jobId = inserted ?? (await ctx.pool.query(job_select_by_key, [key])).rows[0].id;
  const logUrl = await storeLog(ctx, {
    jobId,
    checkName: CONFIG_ERROR_CHECK,
    body: Buffer.from(`${problems}\n`),
    contentType: "text/plain; charset=utf-8",
  });
  const access: RepoAccess = { repo: req.repo, role: "writer", orgRole: null };
  try {
    await reportCheck(ctx, { identity: SCHEDULER_IDENTITY, globalAdmin: false }, access, {
      branch: req.branch.name,
      check_name: CONFIG_ERROR_CHECK,
      status: "failed",
      log_url: logUrl,
      sequence: req.sequence,
    });
  } catch (err) {
    // The branch was merged or abandoned since: nobody will look at its checks any more.
    if (!(err instanceof DomainError && err.code === "BRANCH_NOT_ACTIVE")) throw err;
  }
  return jobId;
}
