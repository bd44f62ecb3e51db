import { spawnSync } from "node:child_process";
import { DEFAULT_OPA_PATH } from "../shared/policy/compile.ts";
import type { QuireClient } from "./client.ts";
import { analyze } from "./database.ts";
import { range } from "./fixtures.ts";
import type { LoadResult } from "./load.ts";
import { type phaseRunner, sentBy } from "./phases.ts";
import type { Plan } from "./plan.ts";
import { type ArchiveTree, measureArchiveOf } from "./scenarios/archive.ts";
import {
  branchRewriting,
  createMergeBranches,
  type MergePlan,
  measureMerges,
  warmMergePath,
} from "./scenarios/merge.ts";
import { measurePolicyEvaluation, type PolicyBenchResult } from "./scenarios/policy.ts";
import {
  firstStatusMs,
  installPolicies,
  statusWithoutPolicies,
  statusWithPolicies,
} from "./scenarios/status.ts";
import type { QuireProcess } from "./server.ts";

/** The second table's figures: merges, policy evaluation, branch status and the archive. */
export interface ReviewResults {
  merge: MergePlan & { result: LoadResult };
  /** The policy engine in the bench's own process, against the server's database. */
  policy: PolicyBenchResult;
  status: {
    branch: string;
    changedFiles: number;
    withoutPolicies: LoadResult;
    firstWithPoliciesMs: number;
    withPolicies: LoadResult;
  };
  archive: ArchiveTree;
}

type Run = ReturnType<typeof phaseRunner>["run"];
const STATUS_BRANCH = "status-check";

/**
 * Why the policy scenarios cannot run, or undefined when they can: both the server and the bench's
 * own engine compile with the pinned opa (`npm run emulators` builds it), else an `opa` on PATH.
 */
export function opaMissing(): string | undefined {
  const found = spawnSync(DEFAULT_OPA_PATH, ["version"], { stdio: "ignore", timeout: 10_000 });
  if (!found.error && found.status === 0) return undefined;
  return `no opa binary (${DEFAULT_OPA_PATH}): the policy scenarios need it; run \`npm run emulators\` first`;
}

/**
 * Runs on the read fixtures once the reads are done, in this order: merges into the big repo's
 * main (which rewrite every one of its files in the full plan), the archive of that main (still
 * exactly `treeFiles` files), the policy engine, then branch status before and after the policies
 * are committed to main (after the archive, so the archive holds no policy files).
 */
export async function measureReview(
  server: QuireProcess,
  q: QuireClient,
  run: Run,
  plan: Plan,
  repos: { big: string; small: string },
): Promise<ReviewResults> {
  const merge = await runMerges(server, q, run, plan, repos);
  const archive = await run(
    "archive",
    () => measureArchiveOf(server, repos.big, { files: plan.treeFiles, repeats: plan.archiveRepeats }),
    (a) => a.runs.length + 1,
  );
  const policy = await run("policy engine", () => measurePolicyEvaluation(server.databaseUrl, plan.policy));
  const status = await runStatus(q, run, plan, repos.big);
  return { merge, policy, status, archive };
}

async function runMerges(
  server: QuireProcess,
  q: QuireClient,
  run: Run,
  plan: Plan,
  repos: { big: string; small: string },
): Promise<ReviewResults["merge"]> {
  const branches = await run("merge setup", async () => {
    await warmMergePath(q, repos.small, plan.merge);
    return createMergeBranches(q, repos.big, plan.treeFiles, plan.merge);
  });
  await analyze(server.databaseUrl);
  const result = await run(
    "merges",
    () => measureMerges(q, repos.big, branches, plan.merge.maxSeconds),
    sentBy,
  );
  return { ...plan.merge, result };
}

async function runStatus(q: QuireClient, run: Run, plan: Plan, repo: string) {
  const changedFiles = plan.merge.files;
  await run("status setup", () =>
    branchRewriting(q, repo, STATUS_BRANCH, range(0, changedFiles), plan.merge.fileBytes),
  );
  const withoutPolicies = await run(
    "status, no policies",
    () => statusWithoutPolicies(q, repo, STATUS_BRANCH, plan.status),
    sentBy,
  );
  await installPolicies(q, repo, STATUS_BRANCH);
  const firstWithPoliciesMs = await firstStatusMs(q, repo, STATUS_BRANCH);
  const withPolicies = await run(
    "status, two policies",
    () => statusWithPolicies(q, repo, STATUS_BRANCH, plan.status),
    sentBy,
  );
  return { branch: STATUS_BRANCH, changedFiles, withoutPolicies, firstWithPoliciesMs, withPolicies };
}
