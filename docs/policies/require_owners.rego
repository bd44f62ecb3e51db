# Every changed path needs an approval of the head from one of its owners: the emails of the
# OWNERS file nearest above it on main (docs/owners.md). Paths with no OWNERS above them need
# nothing. Install it by copying this file to .svc/policy/require_owners.rego on main.
package quire.policy.require_owners

default allow := false

# Those who approved exactly the head being merged.
approvers := {r.reviewer | some r in input.reviews; r.status == "approved"; r.sequence == input.head_sequence}

# The longest prefix in input.owners that starts `path`. Every candidate is a prefix of the same
# path, so the longest one is also the greatest string.
governing(path) := max(prefixes) if {
	prefixes := {p | some p, _ in input.owners; startswith(path, p)}
	count(prefixes) > 0
}

# The changed paths whose owners have not approved the head.
waiting contains path if {
	some path in input.changed_paths
	owners := input.owners[governing(path)]
	count({o | some o in owners; o in approvers}) == 0
}

allow if count(waiting) == 0

# One part per OWNERS file: the paths it governs that wait, and who is asked.
asks contains sprintf("%s (asked: %s)", [concat(", ", sort(paths)), concat(", ", sort(input.owners[prefix]))]) if {
	some prefix in {governing(path) | some path in waiting}
	paths := {path | some path in waiting; governing(path) == prefix}
}

reason := "every changed path is approved by an owner" if allow

reason := sprintf("needs an owner's approval at the head: %s", [concat("; ", sort(asks))]) if not allow
