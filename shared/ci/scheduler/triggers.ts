import type { z } from "zod";
import type { RepoAccess, RepoRow } from "../../access/roles.ts";
import type { Actor } from "../../auth/actor.ts";
import {
  type BranchRow,
  branch_columns,
  MAIN,
  requireActive,
  requireBranch,
} from "../../branches/branches.ts";
import type { AppContext } from "../../context.ts";
import type { Queryable } from "../../db/pool.ts";
import { DomainError, fail } from "../../errors.ts";
import { findRepoByName } from "../../repos/repos.ts";
import { type RunOutcome, requestRuns, SCHEDULER_IDENTITY } from "./runs.ts";
import { commitCreatedData, deliveredEvent, proposalOpenedData } from "./webhook.ts";

/** The repo and branch an event names, or null when either is gone by the time it arrives. */
async function findTarget(db: Queryable, name: string, branch: string) {
  const repo = await findRepoByName(db, name);
  if (!repo) return null;
  try {
    return { repo, branch: await requireBranch(db, repo.id, branch) };
  } catch (err) {
    if (err instanceof DomainError && err.code === "BRANCH_NOT_FOUND") return null;
    throw err;
  }
}

/**
 * The data of a delivered event in the shape the service sends; 400 otherwise (a signed delivery
 * with other data is a bug of the sender, not of the scheduler: it must not answer 500).
 */
function dataOf<S extends z.ZodType>(schema: S, type: string, data: unknown): z.output<S> {
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `data.${i.path.join(".")}: ${i.message}`).join("; ");
    fail("VALIDATION_FAILED", `the data of this ${type} delivery is not valid: ${issues}`);
  }
  return parsed.data;
}

// The open proposal only counts for a commit made after it was opened: the proposal's own job
// already tests the head it was opened at, and a commit's event may arrive after the opening.
const proposal_select_open_before = `
  SELECT id::text, base_branch FROM proposals
  WHERE branch_id = $1 AND state = 'open' AND coalesce(opened_at_sequence, 0) < $2`;

/** The branch's open proposal if `sequence` was committed after it opened, else null. */
async function proposalOpenBefore(db: Queryable, branchId: number, sequence: number) {
  const { rows } = await db.query(proposal_select_open_before, [branchId, sequence]);
  return (rows[0] as { id: string; base_branch: string } | undefined) ?? null;
}

/**
 * One delivered event (SPEC "CI trigger mapping"). `commit.created` may queue `push` and, when
 * the branch has an open proposal, `proposal_synchronized`; `proposal.opened` may queue
 * `proposal`. Jobs are pinned to the sequence the event names (the new commit; the proposal's
 * head when it was opened). Any other type, or a repo or branch deleted since, is acknowledged
 * and queues nothing. A redelivered event queues nothing new (jobs are keyed by event id).
 */
export async function handleDelivery(ctx: AppContext, body: unknown): Promise<RunOutcome | null> {
  const event = deliveredEvent.safeParse(body);
  if (!event.success) fail("VALIDATION_FAILED", "the delivery is not a CloudEvent with id, type and data");
  const { id, type, data } = event.data;
  if (type === "com.svc.commit.created") {
    const commit = dataOf(commitCreatedData, type, data);
    const target = await findTarget(ctx.pool, commit.repo, commit.branch);
    if (!target) return null;
    const open = await proposalOpenBefore(ctx.pool, target.branch.id, commit.sequence);
    return requestRuns(ctx, {
      ...target,
      sequence: commit.sequence,
      delivery: { kind: "commit.created", branch: commit.branch, openProposal: open },
      proposal: open,
      key: id,
      createdBy: SCHEDULER_IDENTITY,
    });
  }
  if (type === "com.svc.proposal.opened") {
    const opened = dataOf(proposalOpenedData, type, data);
    const target = await findTarget(ctx.pool, opened.repo, opened.branch);
    if (!target || opened.sequence === 0) return null;
    return requestRuns(ctx, {
      ...target,
      sequence: opened.sequence,
      delivery: { kind: "proposal.opened", branch: opened.branch, base_branch: opened.base_branch },
      proposal: { id: opened.proposal_id, base_branch: opened.base_branch },
      key: id,
      createdBy: SCHEDULER_IDENTITY,
    });
  }
  return null;
}

// A page of repos with commits on main, each with its main branch row (the branch's columns
// prefixed `b_`), so the runner reads no branch again per repo.
const main_heads_select = `
  SELECT r.id, r.name, r.owner, r.created_at, r.created_by,
         ${branch_columns
           .split(", ")
           .map((c) => `b.${c} AS b_${c}`)
           .join(", ")}
  FROM repos r JOIN branches b ON b.repo_id = r.id AND b.name = '${MAIN}'
  WHERE b.head_sequence > 0 AND r.id > $1
  ORDER BY r.id LIMIT 200`;

/** Splits a row of `main_heads_select` into the repo and its main branch. */
function repoAndMain(row: Record<string, unknown>): { repo: RepoRow; branch: BranchRow } {
  const repo: Record<string, unknown> = {};
  const branch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith("b_")) branch[key.slice(2)] = value;
    else repo[key] = value;
  }
  return { repo: repo as unknown as RepoRow, branch: branch as unknown as BranchRow };
}

/**
 * The cron runner, once a minute: every repo whose `main` configuration has an `on.schedule` cron
 * matching `minute` gets one `schedule` job on main at its head. Keyed by repo and minute, so two
 * runners (two instances, or a retried Cloud Scheduler call) queue it once. Returns the job ids.
 */
export async function runSchedules(ctx: AppContext, minute: Date): Promise<string[]> {
  const at = new Date(Math.floor(minute.getTime() / 60_000) * 60_000);
  const queued: string[] = [];
  for (let after = 0; ; ) {
    const { rows } = await ctx.pool.query(main_heads_select, [after]);
    if (rows.length === 0) return queued;
    for (const row of rows) {
      after = row.id;
      const { repo, branch } = repoAndMain(row);
      const outcome = await requestRuns(ctx, {
        repo,
        branch,
        sequence: branch.head_sequence,
        delivery: { kind: "schedule", minute: at },
        proposal: null,
        key: `schedule:${repo.id}:${at.toISOString()}`,
        createdBy: SCHEDULER_IDENTITY,
      });
      if (outcome.kind === "queued") queued.push(...outcome.jobs.map((j) => j.id));
    }
  }
}

/**
 * `POST /repos/{name}/-/ci/run`: a `manual` job on the branch at its head, whatever the `on`
 * block says. Refused with 409 when the branch has no configuration, when it is invalid (the
 * failed `ci/config` check run is posted as for a push), or when no check's `if:` holds.
 */
export async function manualRun(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  branchName: string,
): Promise<{ run_id: string }> {
  const branch: BranchRow = await requireBranch(ctx.pool, access.repo.id, branchName);
  // A merged or abandoned branch takes no check runs, so its jobs could report nothing.
  requireActive(branch);
  const outcome = await requestRuns(ctx, {
    repo: access.repo,
    branch,
    sequence: branch.head_sequence,
    delivery: { kind: "manual" },
    proposal: null,
    key: null,
    createdBy: actor.identity,
  });
  const where = `'${branch.name}' at ${branch.head_sequence}`;
  if (outcome.kind === "absent") fail("CI_NOT_CONFIGURED", `${where} has no .svc/ci.yaml`);
  if (outcome.kind === "invalid")
    throw new DomainError(
      "CI_CONFIG_INVALID",
      `.svc/ci.yaml on ${where} is invalid; see the ci/config check run`,
      {
        details: { run_id: outcome.jobId },
      },
    );
  const job = outcome.jobs[0];
  if (!job)
    fail(
      "CI_NOTHING_TO_RUN",
      `no check of .svc/ci.yaml on ${where} runs for a manual run (every if: is false)`,
    );
  return { run_id: job.id };
}
