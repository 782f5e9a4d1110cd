# METADATA
# title: Assistant administration
# description: |
#   Who may use the assistant's /admin/* endpoints (list and inspect every upload, re-index an
#   attachment, reload the retrieval state, synchronise the training materials):
#   - a user in the group "admin" or "admins" (the spec names the admin group; Keycloak realms
#     use either name);
#   - any subject whose token carries the scope "assistant.admin" (an operator's client, or a
#     service account that seeds the training materials).
#   Everyone else is refused, anonymous callers first. The input is
#   {subject, resource: {type: "assistant", id: <operation>}, action: {name: <operation>}} with
#   the operations "uploads", "ingest", "reload" and "training_sync".
package rec.assistant.admin

import data.rec.common.subject

default allow := false

default reason := "access denied"

operations := {"uploads", "ingest", "reload", "training_sync"}

admin_groups := {"admin", "admins"}

admin_scope := "assistant.admin"

known_operation if {
	input.resource.type == "assistant"
	input.action.name in operations
}

in_admin_group if {
	subject.is_user
	some g in admin_groups
	subject.in_group(g)
}

allow if grant

reason := grant

reason := denial if not grant

grant := "member of an admin group" if {
	known_operation
	in_admin_group
} else := "holds the assistant.admin scope" if {
	known_operation
	not subject.is_anonymous
	subject.has_scope(admin_scope)
}

denial := "unknown assistant operation" if {
	not known_operation
} else := "anonymous access denied" if {
	subject.is_anonymous
} else := "requires the admin or admins group, or the assistant.admin scope"
