import { createHash } from "node:crypto";
import type { PolicyInput, PolicySource } from "../../shared/policy/engine.ts";

/** A policy source as readPolicySources returns it. */
export function source(name: string, text: string): PolicySource {
  const bytes = Buffer.from(text);
  return { name, source: bytes, sha256: createHash("sha256").update(bytes).digest() };
}

/** The two policies the spec names, and one on the proposal, as docs/policies.md shows them. */
export const REQUIRE_REVIEW = `package quire.policy.require_review

default allow := false

at_head(status) := {r.reviewer | some r in input.reviews; r.sequence == input.head_sequence; r.status == status}

allow if {
  count(at_head("approved")) > 0
  count(at_head("rejected")) == 0
}

default reason := "an approved review of the head is required"

reason := "approved" if allow

reason := sprintf("rejected by %s", [concat(", ", sort(at_head("rejected")))]) if {
  count(at_head("rejected")) > 0
}
`;

export const CI_MUST_PASS = `package quire.policy.ci_must_pass

default allow := false

at_head := [c | some c in input.check_runs; c.sequence == input.head_sequence]

not_passed := sort({c.check_name | some c in at_head; c.status != "passed"})

allow if {
  count(at_head) > 0
  count(not_passed) == 0
}

default reason := "no check has run on the head"

reason := "all checks passed" if allow

reason := sprintf("checks not passed: %s", [concat(", ", not_passed)]) if count(not_passed) > 0
`;

export const OPEN_PROPOSAL = `package quire.policy.open_proposal

default allow := false

allow if {
  input.proposal.state == "open"
  trim_space(input.proposal.title) != ""
}

reason := "an open proposal with a title is required" if not allow
`;

/** No \`reason\`: the engine reports "allowed" or "denied by <name>". */
export const NO_REASON = `package quire.policy.feature_only

allow if startswith(input.branch, "feature/")
`;

/** Rego v0 syntax (no \`if\`), which OPA v1 rejects. */
export const PARSE_ERROR = `package quire.policy.old

allow {
  true
}
`;

/** Parses, but the compiler rejects it: \`y\` is never bound. */
export const UNSAFE_VAR = `package quire.policy.unsafe

allow if {
  x := input.actor
  y == x
}
`;

export const NO_ALLOW = `package quire.policy.no_allow

reason := "nothing to see"
`;

/** Compiles; evaluating it is a conflict (two complete definitions with different values). */
export const CONFLICT = `package quire.policy.conflict

allow := true if input.branch != ""

allow := false if input.actor != ""
`;

/** About 9 million iterations over a 3,000-number range: far beyond the 250 ms limit. */
export const SLOW = `package quire.policy.slow

n := numbers.range(1, 2000)

allow if {
  count([1 | some a in n; some b in n; a * b == -1]) == 0
}
`;

/** An input in which require_review, ci_must_pass and open_proposal all pass. */
export function input(over: Partial<PolicyInput> = {}): PolicyInput {
  return {
    actor: "maintainer@example.com",
    actor_roles: ["maintainer"],
    action: "merge",
    repo: "acme/docs",
    branch: "feature/x",
    draft: false,
    changed_paths: ["a.md"],
    reviews: [{ reviewer: "rev@example.com", status: "approved", sequence: 7 }],
    check_runs: [
      { check_name: "ci/lint", status: "passed", sequence: 7 },
      { check_name: "ci/test", status: "passed", sequence: 7 },
    ],
    attestations: [],
    owners: {},
    structure: {},
    head_sequence: 7,
    base_sequence: 3,
    proposal: { id: "p1", branch: "feature/x", base_branch: "main", title: "Add a", state: "open" },
    ...over,
  };
}
