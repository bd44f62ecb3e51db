import type { ReplyOf } from "../../cli/client/index.ts";
import { policies } from "../../test/support/policies.ts";
import type { QuireClient } from "../client.ts";
import { commit } from "../fixtures.ts";
import { type Budget, type LoadResult, runLoad } from "../load.ts";
import { progress } from "../log.ts";

/** The spec's two policies, as a repo keeps them: `.svc/policy/<name>.rego` on main. */
export const STATUS_POLICIES: Record<string, string> = {
  require_review: policies.require_review,
  ci_must_pass: policies.ci_must_pass,
};

/**
 * The verdicts expected with the policies: every request is the bench's one identity, which
 * authored the branch and so may not approve it (docs/reviews.md); require_review denies, and
 * ci_must_pass passes on the bench's check run. Both are evaluated either way.
 */
const EXPECTED_WITH_POLICIES = { ci_must_pass: true, require_review: false };

type StatusAnswer = ReplyOf<"GET", "/repos/:repo*/-/branch/:branch*/status">;

/** Throws unless the answer has no conflicts and exactly the expected verdicts, by policy name. */
function expectVerdicts(answer: StatusAnswer, expected: Record<string, boolean>): void {
  const got = Object.fromEntries(answer.policies.map((p) => [p.name, p.pass]));
  const allPass = Object.values(expected).every((pass) => pass);
  if (
    answer.conflicts.length > 0 ||
    answer.mergeable !== allPass ||
    JSON.stringify(got) !== JSON.stringify(expected)
  )
    throw new Error(`unexpected branch status: ${JSON.stringify(answer).slice(0, 300)}`);
}

const getStatus = (q: QuireClient, repo: string, branch: string) =>
  q.get("/repos/:repo*/-/branch/:branch*/status", { params: { repo, branch } });

/** GET branch/{branch}/status, one client, one request at a time, checking every answer. */
function statusLoop(
  q: QuireClient,
  repo: string,
  branch: string,
  budget: Budget,
  expected: Record<string, boolean>,
): Promise<LoadResult> {
  return runLoad({
    label: `status of ${branch}`,
    concurrency: 1,
    warmup: 10,
    ...budget,
    send: async () => expectVerdicts(await getStatus(q, repo, branch), expected),
  });
}

/** Branch status with no policy files on main: net changes and conflicts only, `policies: []`. */
export function statusWithoutPolicies(
  q: QuireClient,
  repo: string,
  branch: string,
  budget: Budget,
): Promise<LoadResult> {
  progress(`status: ${branch} of ${repo}, no policies on main`);
  return statusLoop(q, repo, branch, budget, {});
}

/** Commits the two policies to main and reports a passed check run at the head of `branch`. */
export async function installPolicies(q: QuireClient, repo: string, branch: string): Promise<void> {
  const files = Object.entries(STATUS_POLICIES).map(([name, text]) => ({
    path: `.svc/policy/${name}.rego`,
    text,
  }));
  await commit(q, repo, "main", "install merge policies", files);
  await q.post("/repos/:repo*/-/check", {
    params: { repo },
    body: { branch, check_name: "ci/bench", status: "passed" },
  });
}

/** The first status after installPolicies, in ms: the server compiles both policies with opa. */
export async function firstStatusMs(q: QuireClient, repo: string, branch: string): Promise<number> {
  const started = performance.now();
  expectVerdicts(await getStatus(q, repo, branch), EXPECTED_WITH_POLICIES);
  return performance.now() - started;
}

/** Branch status with the two policies on main, compiled and warm in the server. */
export function statusWithPolicies(
  q: QuireClient,
  repo: string,
  branch: string,
  budget: Budget,
): Promise<LoadResult> {
  progress(`status: ${branch} of ${repo}, require_review and ci_must_pass on main`);
  return statusLoop(q, repo, branch, budget, EXPECTED_WITH_POLICIES);
}
