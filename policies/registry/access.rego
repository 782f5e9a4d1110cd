# METADATA
# title: Community registry access
# description: |
#   The spec leaves the registry's access control a seam (its original allowed everything);
#   this policy fills it. Resource type `registry`, actions:
#   | action                     | allowed for                                                   | filters |
#   | read (the user routes)     | admins (group admins)                                         | none: every community |
#   |                            | services with registry.read or registry.admin                | none: every community |
#   |                            | any other authenticated user                                  | the communities the user is a member of |
#   | export, validate, import   | admins (group admins); services with registry.admin           | none |
#   A user is a member of a community when one of its members has the user's id (the token's
#   `sub`) as `user_id` and a status in `member_statuses` (an `inactive` member has left).
#   The registry applies the filters in SQL: `member.user_id eq <id>` and `member.status in [...]`;
#   it refuses any filter it does not know (fail closed). Users need no client scope to read
#   their own communities (the web frontend's client has none for the registry).
package rec.registry.access

import data.rec.common.subject

default allow := false

default reason := "access denied"

action := input.action.name

read_actions := {"read"}

admin_actions := {"export", "validate", "import"}

read_scopes := {"registry.read", "registry.admin"}

# Statuses of a member that still belongs to its community.
member_statuses := ["active", "pending", "suspended"]

is_registry if input.resource.type == "registry"

allow if grant

reason := grant

reason := denial if not grant

grant := "admin reads every community" if {
	is_registry
	action in read_actions
	subject.is_user
	subject.in_group("admins")
} else := "service has a registry read scope" if {
	is_registry
	action in read_actions
	subject.is_service
	subject.has_any_scope(read_scopes)
} else := "user reads the communities it is a member of" if {
	is_registry
	action in read_actions
	subject.is_user
} else := "admin may administer the registry" if {
	is_registry
	action in admin_actions
	subject.is_user
	subject.in_group("admins")
} else := "service has the registry.admin scope" if {
	is_registry
	action in admin_actions
	subject.is_service
	subject.has_scope("registry.admin")
}

# Rows a member may see; no filter for admins and services (and nothing for a denial).
filters := [
	{"field": "member.user_id", "operator": "eq", "value": subject.id},
	{"field": "member.status", "operator": "in", "value": member_statuses},
] if {
	grant == "user reads the communities it is a member of"
} else := []

denial := "resource type must be registry" if {
	not is_registry
} else := "unsupported action" if {
	not action in read_actions
	not action in admin_actions
} else := "anonymous access denied" if {
	subject.is_anonymous
} else := "service needs the registry.read scope" if {
	action in read_actions
	subject.is_service
} else := "service needs the registry.admin scope" if {
	action in admin_actions
	subject.is_service
} else := "only admins may export, validate or import bundles" if {
	action in admin_actions
} else := "insufficient privileges"
