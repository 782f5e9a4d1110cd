# METADATA
# title: Digital twin access and event emission
# description: |
#   | action   | users (group level and client scope)         | services (scope)               |
#   | read     | viewers+ with dt.read, dt.write or dt.admin  | dt.read, dt.write or dt.admin  |
#   | write    | editors+ with dt.write or dt.admin           | dt.write or dt.admin           |
#   | simulate | managers+ with dt.simulate or dt.admin       | dt.simulate or dt.admin        |
#   | admin    | admins with dt.admin                         | dt.admin                       |
#   Emitting events (action emit_event) is for services only: dt.write, dt.simulate or
#   dt.admin; a `simulation` event needs dt.simulate or dt.admin. The event type and the
#   simulation state arrive in action.context {event_type, simulation_state}.
package rec.dt.access

import data.rec.common.subject

default allow := false

default reason := "access denied"

action := input.action.name

# Scopes that grant each action, and the group level a user needs for it.
action_scopes := {
	"read": {"dt.read", "dt.write", "dt.admin"},
	"write": {"dt.write", "dt.admin"},
	"simulate": {"dt.simulate", "dt.admin"},
	"admin": {"dt.admin"},
}

action_levels := {
	"read": subject.level_viewer,
	"write": subject.level_editor,
	"simulate": subject.level_manager,
	"admin": subject.level_admin,
}

user_reasons := {
	"read": "user can read dt data",
	"write": "user can write dt data",
	"simulate": "user can run simulations",
	"admin": "admin access granted",
}

service_reasons := {
	"read": "service has dt read scope",
	"write": "service has dt write scope",
	"simulate": "service has dt simulate scope",
	"admin": "admin access granted",
}

event_scopes := {"dt.write", "dt.simulate", "dt.admin"}

simulation_scopes := {"dt.simulate", "dt.admin"}

is_simulation_event if input.action.context.event_type == "simulation"

allow if grant

reason := grant

reason := denial if not grant

grant := user_reasons[action] if {
	input.resource.type == "dt"
	subject.is_user
	subject.has_group_level(action_levels[action])
	subject.has_any_scope(action_scopes[action])
} else := service_reasons[action] if {
	input.resource.type == "dt"
	subject.is_service
	subject.has_any_scope(action_scopes[action])
} else := "service can emit dt simulation events" if {
	input.resource.type == "dt"
	action == "emit_event"
	subject.is_service
	is_simulation_event
	subject.has_any_scope(simulation_scopes)
} else := "service can emit dt events" if {
	input.resource.type == "dt"
	action == "emit_event"
	subject.is_service
	not is_simulation_event
	subject.has_any_scope(event_scopes)
}

denial := "resource type must be dt" if {
	not input.resource.type == "dt"
} else := "unsupported action" if {
	not action in {"read", "write", "simulate", "admin", "emit_event"}
} else := "anonymous access denied" if {
	subject.is_anonymous
} else := "only services may emit dt events" if {
	action == "emit_event"
	not subject.is_service
} else := "simulation events need the dt.simulate or dt.admin scope" if {
	action == "emit_event"
	is_simulation_event
	subject.has_any_scope(event_scopes)
} else := "missing dt scope for requesting client" if {
	subject.is_user
	not subject.has_any_scope(action_scopes[action])
} else := "insufficient privileges"
