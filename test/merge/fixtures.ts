import { expect } from "vitest";
import { commit, type RepoFixture } from "../commits/fixtures.ts";
import { b64 } from "../support/client.ts";

/** The three policies of the spec and DESIGN.md, as a repo would keep them under `.svc/policy/`. */
export const policies = {
  require_review: `package svc.policy.require_review

default allow := false

approved if {
  some r in input.reviews
  r.status == "approved"
  r.sequence == input.head_sequence
}

rejected if {
  some r in input.reviews
  r.status == "rejected"
}

allow if {
  approved
  not rejected
}

reason := "approved" if allow
reason := "needs an approving review at the head" if not allow
`,
  ci_must_pass: `package svc.policy.ci_must_pass

default allow := false

allow if {
  count(input.check_runs) > 0
  every c in input.check_runs { c.status == "passed" }
}

reason := "all checks passed" if allow
reason := "every check must pass at the head" if not allow
`,
  proposal_required: `package svc.policy.proposal_required

default allow := false

allow if {
  input.proposal != null
  input.proposal.state == "open"
}
`,
};

/** Commits policy files to main (the fixture's client is the org owner, so it may). */
export async function installPolicies(fx: RepoFixture, sources: Record<string, string>): Promise<number> {
  const files = Object.entries(sources).map(([name, text]) => ({
    path: `.svc/policy/${name}.rego`,
    content: b64(text),
  }));
  return commit(fx, "main", files, "install policies");
}

export async function merge(fx: RepoFixture, branch: string) {
  return fx.client.post(`${fx.base}/merge`, { branch });
}

export async function rebase(fx: RepoFixture, branch: string) {
  return fx.client.post(`${fx.base}/rebase`, { branch });
}

export async function expectMerged(fx: RepoFixture, branch: string) {
  const res = await merge(fx, branch);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { sequence: number; branch: string; merged_by: string; proposal_id: string | null };
}
