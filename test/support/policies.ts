// No test-runner imports here: `npm run bench` uses these too.

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
