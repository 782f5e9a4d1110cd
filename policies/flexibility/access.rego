# METADATA
# title: Flexibility suggestions and commitments
# description: |
#   Who may do what in the flexibility service (reference nudging-flexibility.md A8, enforced on
#   every route and failing closed, unlike the original). The input names the resource and the
#   user whose data it is:
#     resource.type                 "flexibility.suggestion" or "flexibility.commitment"
#     resource.attributes.owner_id  the user whose suggestions or commitments are acted on;
#                                   absent when the action spans every user (a service listing
#                                   everyone's commitments, export, pending, settle)
#     action.name                   suggestions: list, respond;
#                                   commitments: create, list, read, cancel, pending, settle, export
#   - Users (any valid platform token; no flexibility scope is needed) list and answer their own
#     suggestions, and create, list, read and cancel their own commitments. Nothing else: the
#     pending view, settlement and the export are the platform's.
#   - Service accounts act by the scopes the platform issues: flexibility.commitments.read (list,
#     read), flexibility.commitments.write (create for a user, cancel),
#     flexibility.commitments.export (export), flexibility.admin (all of these, plus pending and
#     settle). Suggestions are computed with a user's own token, so services have none.
package rec.flexibility.access

import data.rec.common.subject

default allow := false

default reason := "access denied"

action := input.action.name

resource_type := input.resource.type

user_actions := {
	"flexibility.suggestion": {"list", "respond"},
	"flexibility.commitment": {"create", "list", "read", "cancel"},
}

service_scopes := {"flexibility.commitment": {
	"list": {"flexibility.commitments.read", "flexibility.admin"},
	"read": {"flexibility.commitments.read", "flexibility.admin"},
	"create": {"flexibility.commitments.write", "flexibility.admin"},
	"cancel": {"flexibility.commitments.write", "flexibility.admin"},
	"export": {"flexibility.commitments.export", "flexibility.admin"},
	"pending": {"flexibility.admin"},
	"settle": {"flexibility.admin"},
}}

known_actions := {"flexibility.suggestion": user_actions["flexibility.suggestion"], "flexibility.commitment": {
	a |
		some a, _ in service_scopes["flexibility.commitment"]
}}

# The user whose data is acted on; undefined when the action spans every user.
owner := input.resource.attributes.owner_id if is_string(input.resource.attributes.owner_id)

own_data if owner == subject.id

user_reasons := {
	"flexibility.suggestion": "user acting on own suggestions",
	"flexibility.commitment": "user acting on own commitments",
}

allow if grant

reason := grant

reason := denial if not grant

grant := user_reasons[resource_type] if {
	subject.is_user
	action in user_actions[resource_type]
	own_data
} else := "service access granted" if {
	subject.is_service
	subject.has_any_scope(service_scopes[resource_type][action])
}

needed_scopes := concat(" or ", sort([s | some s in service_scopes[resource_type][action]]))

denial := "resource type must be flexibility.suggestion or flexibility.commitment" if {
	not known_actions[resource_type]
} else := "unsupported action" if {
	not action in known_actions[resource_type]
} else := "anonymous access denied" if {
	subject.is_anonymous
} else := "suggestions are computed with a user's own token: service accounts have none" if {
	subject.is_service
	resource_type == "flexibility.suggestion"
} else := sprintf("service account needs the scope %s", [needed_scopes]) if {
	subject.is_service
} else := sprintf("%s is for service accounts only", [action]) if {
	subject.is_user
	not action in user_actions[resource_type]
} else := "users act on their own commitments only" if {
	subject.is_user
	not owner
} else := "not resource owner" if {
	subject.is_user
} else := "unknown subject type"
