# METADATA
# title: User-owned data (dashboards, profiles, settings)
# description: |
#   Users need a userdata scope on their client: userdata.read, userdata.write or
#   userdata.admin to read, userdata.write or userdata.admin to change anything.
#   - the owner may read, write, delete and share their own data;
#   - a resource shared with the user (shared_with) or one of the user's groups
#     (shared_with_groups) is readable, never writable;
#   - a dashboard with visibility "public" is readable by every user;
#   - an admin (group admins) whose client holds userdata.admin may read, write and delete
#     anyone's data;
#   - services act by scope: read with userdata.read or userdata.admin, write with
#     userdata.write or userdata.admin, delete with userdata.admin; they never share.
#   The resource attributes are {resource_type, owner_id, shared_with, shared_with_groups,
#   visibility}.
package rec.userdata.access

import data.rec.common.subject

default allow := false

default reason := "access denied"

attrs := input.resource.attributes

action := input.action.name

read_scopes := {"userdata.read", "userdata.write", "userdata.admin"}

write_scopes := {"userdata.write", "userdata.admin"}

is_owner if {
	subject.is_user
	attrs.owner_id == subject.id
}

shared_with_subject if subject.id in attrs.shared_with

shared_with_subject if {
	some g in attrs.shared_with_groups
	subject.in_group(g)
}

public_dashboard if {
	attrs.resource_type == "dashboard"
	attrs.visibility == "public"
}

owner_reasons := {
	"read": "user accessing own data",
	"write": "user modifying own data",
	"delete": "user deleting own data",
	"share": "owner can share resource",
}

service_scopes := {
	"read": {"userdata.read", "userdata.admin"},
	"write": {"userdata.write", "userdata.admin"},
	"delete": {"userdata.admin"},
}

allow if grant

reason := grant

reason := denial if not grant

# Tried in order, so an owner who is also an admin or a sharee gets exactly one reason.
grant := owner_reasons[action] if {
	input.resource.type == "userdata"
	is_owner
	action == "read"
	subject.has_any_scope(read_scopes)
} else := owner_reasons[action] if {
	input.resource.type == "userdata"
	is_owner
	action in {"write", "delete", "share"}
	subject.has_any_scope(write_scopes)
} else := "admin override" if {
	input.resource.type == "userdata"
	action in {"read", "write", "delete"}
	subject.has_group_level(subject.level_admin)
	subject.has_scope("userdata.admin")
} else := "resource shared with user" if {
	input.resource.type == "userdata"
	action == "read"
	subject.is_user
	shared_with_subject
	subject.has_any_scope(read_scopes)
} else := "public dashboard readable" if {
	input.resource.type == "userdata"
	action == "read"
	subject.is_user
	public_dashboard
	subject.has_any_scope(read_scopes)
} else := "service access granted" if {
	input.resource.type == "userdata"
	subject.is_service
	subject.has_any_scope(service_scopes[action])
}

denial := "resource type must be userdata" if {
	not input.resource.type == "userdata"
} else := "unsupported action" if {
	not action in {"read", "write", "delete", "share"}
} else := "anonymous access denied" if {
	subject.is_anonymous
} else := "missing userdata scope for requesting client" if {
	subject.is_user
	not subject.has_any_scope(read_scopes)
} else := "missing userdata.write scope for requesting client" if {
	is_owner
	not subject.has_any_scope(write_scopes)
} else := "shared resources are read-only" if {
	subject.is_user
	shared_with_subject
} else := "public dashboards are read-only" if {
	subject.is_user
	public_dashboard
} else := "not resource owner" if {
	subject.is_user
} else := "services cannot share user data" if {
	subject.is_service
	action == "share"
} else := "insufficient service scope" if {
	subject.is_service
} else := "unknown subject type"
