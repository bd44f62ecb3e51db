# Every check named in `required` must have passed at the head by a CI job's signed verdict: an
# attestation the server verified against the log's key (docs/verifiable-history.md), not a bare
# check status. A person (or a token) that posts `passed` under the same check name adds a check
# run but no attestation, so it does not count. Edit `required`, then install this file as
# .svc/policy/require_attested_checks.rego on main.
package quire.policy.require_attested_checks

default allow := false

required := {"ci/test"}

# The checks a job attested as passed at exactly the head being merged.
attested_passed := {a.check_name |
	some a in input.attestations
	a.result == "passed"
	a.sequence == input.head_sequence
}

missing := required - attested_passed

allow if count(missing) == 0

reason := "every required check passed, attested by its CI job" if allow

reason := sprintf("needs a CI job's signed pass at the head for: %s", [concat(", ", sort(missing))]) if not allow
