# METADATA
# title: Dataset access
# description: |
#   The dataset access matrix of the spec (part 4A, rule 3). Roles: anonymous, viewers,
#   editors, managers, admins.
#     open:       read for every role (no scope needed); read/write for admins
#     internal:   viewers read*, editors read/write*, managers read/write*, admins read/write
#     restricted: admins read/write*
#   * the calling client must hold dataset.query or dataset.admin (either one, for reads and
#   writes alike); a cell without an asterisk needs no client scope. The `admin` action is not
#   in the matrix: admins whose client holds dataset.admin. Service accounts act by scope alone:
#   dataset.query or dataset.admin reads internal data, dataset.admin writes and reads
#   restricted data and is the admin action.
#   Every decision carries exactly one reason; denials follow the precedence
#   anonymous > missing client scope > insufficient group or scope.
package rec.dataset.access

import data.rec.common.subject

default allow := false

default reason := "access denied"

levels := {"open", "internal", "restricted"}

actions := {"read", "write", "admin"}

level := input.resource.attributes.access_level

action := input.action.name

client_can_query if subject.has_any_scope({"dataset.query", "dataset.admin"})

client_can_write if subject.has_scope("dataset.admin")

allow if grant

reason := grant

reason := denial if not grant

# Granted cells, tried in order; the first match names the reason.
grant := "admin action authorized" if {
	level in levels
	action == "admin"
	subject.has_group_level(subject.level_admin)
	client_can_write
} else := "admin action authorized" if {
	level in levels
	action == "admin"
	subject.is_service
	client_can_write
} else := "open datasets are publicly readable" if {
	level == "open"
	action == "read"
} else := user_grant if {
	subject.is_user
} else := service_grant if {
	subject.is_service
}

user_grant := sprintf("user has admin access and client has %s scope", [named_scope("dataset.admin")]) if {
	level == "restricted"
	action in {"read", "write"}
	subject.has_group_level(subject.level_admin)
	client_can_query
} else := sprintf("user has editor access and client has %s scope", [named_scope("dataset.admin")]) if {
	level == "internal"
	action == "write"
	subject.has_group_level(subject.level_editor)
	client_can_query
} else := sprintf("user has viewer access and client has %s scope", [named_scope("dataset.query")]) if {
	level == "internal"
	action == "read"
	subject.has_group_level(subject.level_viewer)
	client_can_query
} else := "user has admin access" if {
	level in {"open", "internal"}
	action in {"read", "write"}
	subject.has_group_level(subject.level_admin)
}

# The dataset scope an asterisk cell names in its reason: the reference's scope for that cell
# (dataset.query for internal reads, dataset.admin otherwise) when the client holds it.
named_scope(preferred) := preferred if subject.has_scope(preferred)
else := "dataset.query" if subject.has_scope("dataset.query")
else := "dataset.admin"

service_grant := "service has dataset.admin scope for restricted access" if {
	level == "restricted"
	action in {"read", "write"}
	client_can_write
} else := "service has dataset.admin scope" if {
	action == "write"
	level in {"open", "internal"}
	client_can_write
} else := "service has dataset.query scope" if {
	action == "read"
	level == "internal"
	subject.has_scope("dataset.query")
} else := "service has dataset.admin scope" if {
	action == "read"
	level == "internal"
	client_can_write
}

# Reading or writing an open dataset never needs a client scope: there only the group can be
# missing. Every other cell a user may be granted needs one, except admins' internal cells.
scope_needed if level != "open"

scope_needed if action == "admin"

denial := "unknown access level" if {
	not level in levels
} else := "unsupported action" if {
	not action in actions
} else := "anonymous access denied for non-open datasets" if {
	subject.is_anonymous
	level != "open"
} else := "anonymous access is limited to reading open datasets" if {
	subject.is_anonymous
} else := "missing dataset scope for requesting client" if {
	subject.is_user
	not client_can_query
	scope_needed
} else := "missing dataset.admin scope for admin" if {
	subject.is_user
	action == "admin"
	not client_can_write
} else := "insufficient group privileges" if {
	subject.is_user
} else := "insufficient scope privileges" if {
	subject.is_service
} else := "unknown subject type"
