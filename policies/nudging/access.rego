# METADATA
# title: Notification (nudging) service
# description: |
#   Resources are `nudging.<kind>` (`event`, `scheduled_event`, `notification`, `preferences`,
#   `subscription`) with attributes {owner_id}: the user the data belongs to.
#   | action                 | allowed                                                              |
#   | ingest                 | services with nudging.ingest or nudging.admin; never users           |
#   | read, write, send_test | the owner (a user whose id is owner_id), or an administrator: a      |
#   |                        | service with nudging.admin, or a user in the admins group whose      |
#   |                        | client holds nudging.admin                                           |
#   An `email-ingest:` recipient group is owned by nobody: only administrators read its data.
#   Users need no scope for their own data (the web app's client holds no nudging scope).
package rec.nudging.access

import data.rec.common.subject

default allow := false

default reason := "access denied"

action := input.action.name

owner := input.resource.attributes.owner_id

resource_types := {"nudging.event", "nudging.scheduled_event", "nudging.notification", "nudging.preferences", "nudging.subscription"}

ingest_scopes := {"nudging.ingest", "nudging.admin"}

owner_actions := {"read", "write", "send_test"}

is_nudging_resource if input.resource.type in resource_types

is_admin if {
	subject.is_service
	subject.has_scope("nudging.admin")
}

is_admin if {
	subject.has_group_level(subject.level_admin)
	subject.has_scope("nudging.admin")
}

is_owner if {
	subject.is_user
	is_string(owner)
	owner != ""
	not startswith(owner, "email-ingest:")
	owner == subject.id
}

allow if grant

reason := grant

reason := denial if not grant

# Tried in order, so a caller gets exactly one reason.
grant := "service may ingest nudging events" if {
	is_nudging_resource
	action == "ingest"
	subject.is_service
	subject.has_any_scope(ingest_scopes)
} else := "user accessing own notifications" if {
	is_nudging_resource
	action in owner_actions
	is_owner
} else := "nudging administrator" if {
	is_nudging_resource
	action in owner_actions
	is_admin
}

denial := "resource type must be a nudging resource" if {
	not is_nudging_resource
} else := "unsupported action" if {
	not action in ({"ingest"} | owner_actions)
} else := "anonymous access denied" if {
	subject.is_anonymous
} else := "users may not ingest events" if {
	action == "ingest"
	subject.is_user
} else := "missing nudging.ingest scope" if {
	action == "ingest"
	subject.is_service
} else := "not the owner of this data" if {
	subject.is_user
} else := "missing nudging.admin scope" if {
	subject.is_service
} else := "unknown subject type"
