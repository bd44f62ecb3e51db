# A release bump merges without review: when every changed file is a JSON or YAML document in
# which only `version` and `changelog` changed. Any other change needs an approval of the head by
# a maintainer named below. Install it by copying this file to .svc/policy/release_fields.rego
# on main, with your maintainers' emails in `maintainers` (docs/policies.md).
package quire.policy.release_fields

default allow := false

maintainers := {"lead@example.com"}

free_fields := {"version", "changelog"}

# `version`, `changelog.latest` and `changelog[3]` lie in a free field; `versions` does not.
free(path) if {
	some f in free_fields
	path == f
}

free(path) if {
	some f in free_fields
	some sep in [".", "["]
	startswith(path, concat("", [f, sep]))
}

# What needs a review: a changed file without a structured view (not JSON or YAML, does not
# parse, too large), a file whose list of changed places was cut short, and every place outside
# the free fields.
needs_review contains file if {
	some file in input.changed_paths
	not input.structure[file]
}

needs_review contains sprintf("%s (more than listed)", [file]) if {
	some file, s in input.structure
	s.truncated
}

needs_review contains sprintf("%s: %s", [file, place]) if {
	some file, s in input.structure
	some p in s.paths
	not free(p.path)
	place := p.path
}

maintainer_approved if {
	some r in input.reviews
	r.status == "approved"
	r.sequence == input.head_sequence
	r.reviewer in maintainers
}

allow if count(needs_review) == 0

allow if maintainer_approved

reason := "only version and changelog changed" if count(needs_review) == 0

reason := "approved by a maintainer" if {
	count(needs_review) > 0
	maintainer_approved
}

reason := sprintf("needs a maintainer's approval at the head: %s", [concat(", ", shown)]) if {
	not allow
	listed := sort(needs_review)
	shown := array.concat(array.slice(listed, 0, 10), [sprintf("%d more", [count(listed) - 10]) | count(listed) > 10])
}
