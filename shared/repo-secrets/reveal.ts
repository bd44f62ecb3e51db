import { atLeast, findRepoAccess } from "../access/roles.ts";
import type { RevealSecretsResponse } from "../api/secrets.ts";
import { MAIN, requireBranch } from "../branches/branches.ts";
import { requireJobRepo } from "../ci/jobs/operations.ts";
import type { JobRow } from "../ci/jobs/records.ts";
import { configAt } from "../ci/scheduler/config-at.ts";
import { globalAdminsOf } from "../config.ts";
import type { AppContext } from "../context.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { openSecrets } from "./secrets.ts";

/**
 * Whether a job may have the repo's secrets at all, by how it was started (docs/secrets.md, "Which
 * runs get secrets"): null when it may, else why not. The configuration a job runs is read from
 * the branch under test, so whoever wrote that branch decides what its checks do with a secret.
 * Only runs of code that someone trusted with the secrets chose to run get them:
 *
 * - `push` to main and `schedule` (which runs main): main holds what the repo's policies let in.
 * - `manual`, when the person who started it is a maintainer or admin of the repo now: they chose
 *   to run that branch's code with the secrets (a writer's manual run gets none).
 * - never `push` to another branch, `proposal` or `proposal_synchronized`: any writer can make
 *   those run code of their own.
 */
export async function secretsBlockedReason(ctx: AppContext, job: JobRow): Promise<string | null> {
  switch (job.trigger_type) {
    case "schedule":
      return null;
    case "push":
      return job.branch === MAIN
        ? null
        : `a push to '${job.branch}' gets no secrets: only pushes to ${MAIN}, schedules and maintainers' manual runs do`;
    case "manual": {
      const by = job.created_by.toLowerCase();
      const globalAdmin = globalAdminsOf(ctx.config).includes(by);
      const access = await findRepoAccess(ctx.pool, job.repo, { identity: by, globalAdmin });
      return atLeast(access?.role ?? null, "maintainer")
        ? null
        : `a manual run started by ${job.created_by}, who is not a maintainer of ${job.repo}, gets no secrets`;
    }
    case "proposal":
    case "proposal_synchronized":
      return `a ${job.trigger_type} run gets no secrets: its branch's checks are anyone's with write access`;
  }
}

/**
 * `POST /repos/{name}/-/secrets/reveal` with the job's request token: the values of the secrets
 * that one check of the job lists under `secrets:` in the `.svc/ci.yaml` the job runs (the branch
 * at its pinned sequence), and only when the job may have secrets at all. Each value handed out is
 * recorded as `com.svc.secret.accessed` (name, job and check; never the value).
 */
export async function revealForJob(
  ctx: AppContext,
  job: JobRow,
  repo: string,
  request: { check_name: string; names: string[] },
): Promise<RevealSecretsResponse> {
  requireJobRepo(job, repo);
  const check = request.check_name;
  if (!job.checks.includes(check))
    fail("SECRETS_BLOCKED", `check '${check}' is not one of this job's checks`);
  const blocked = await secretsBlockedReason(ctx, job);
  if (blocked) fail("SECRETS_BLOCKED", blocked);
  const branch = await requireBranch(ctx.pool, job.repo_id, job.branch);
  const config = await configAt(ctx.pool, ctx.blobs, job.repo_id, branch, job.sequence);
  const listed = new Set(
    config.kind === "valid" ? (config.config.checks.find((c) => c.name === check)?.secrets ?? []) : [],
  );
  const unlisted = request.names.filter((n) => !listed.has(n));
  if (unlisted.length > 0)
    fail(
      "SECRETS_BLOCKED",
      `check '${check}' does not list ${unlisted.join(", ")} under secrets: in .svc/ci.yaml at sequence ${job.sequence}`,
    );
  const names = [...new Set(request.names)];
  const values = await openSecrets(ctx, ctx.pool, job.repo_id, names);
  await withTx(ctx.pool, async (tx) => {
    for (const name of names.filter((n) => values.has(n)))
      await recordEvent(
        tx,
        "com.svc.secret.accessed",
        {
          repo: job.repo,
          name,
          job_id: job.id,
          check_name: check,
          branch: job.branch,
          sequence: job.sequence,
        },
        { repo: job.repo },
      );
  });
  return {
    values: Object.fromEntries([...values].map(([name, value]) => [name, value.toString("base64")])),
    missing: names.filter((n) => !values.has(n)),
  };
}
