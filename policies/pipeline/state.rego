# METADATA
# title: Pipeline state transitions
# description: |
#   Valid moves: pending -> started | cancelled; started -> running | failed | cancelled;
#   running -> completed | failed | cancelled; failed -> pending (retry);
#   cancelled -> pending (restart). completed is terminal; same-state moves and skips are
#   invalid. Who may trigger a move:
#   - users need pipeline.execute or pipeline.admin on the client and a group level:
#     editors+ move to started or running, managers+ also to cancelled or pending,
#     admins make any valid move;
#   - services act by scope: pipeline.execute moves to started, running, completed or
#     failed; pipeline.admin makes any valid move;
#   - anonymous subjects never move pipelines.
#   Reading pipeline state (action read) is open to every authenticated subject.
package rec.pipeline.state

import data.rec.common.subject

default allow := false

default reason := "access denied"

transitions := {
	"pending": {"started", "cancelled"},
	"started": {"running", "failed", "cancelled"},
	"running": {"completed", "failed", "cancelled"},
	"completed": set(),
	"failed": {"pending"},
	"cancelled": {"pending"},
}

states := {s | some s, _ in transitions}

from_state := input.action.context.from_state

to_state := input.action.context.to_state

valid_transition if to_state in transitions[from_state]

pipeline_scopes := {"pipeline.execute", "pipeline.admin"}

# Targets each group level may move to (a level includes the targets of the lower ones).
user_targets := states if subject.has_group_level(subject.level_admin)
else := {"started", "running", "cancelled", "pending"} if subject.has_group_level(subject.level_manager)
else := {"started", "running"} if subject.has_group_level(subject.level_editor)
else := set()

service_targets := states if subject.has_scope("pipeline.admin")
else := {"started", "running", "completed", "failed"} if subject.has_scope("pipeline.execute")
else := set()

allow if grant

reason := grant

reason := denial if not grant

grant := "authenticated users can read pipeline state" if {
	input.resource.type == "pipeline"
	input.action.name == "read"
	not subject.is_anonymous
} else := "valid state transition authorized" if {
	input.resource.type == "pipeline"
	input.action.name == "transition"
	valid_transition
	subject.is_user
	subject.has_any_scope(pipeline_scopes)
	to_state in user_targets
} else := "valid state transition authorized" if {
	input.resource.type == "pipeline"
	input.action.name == "transition"
	valid_transition
	subject.is_service
	to_state in service_targets
}

# An invalid move is reported as such whoever asks: it is a property of the request.
denial := "resource type must be pipeline" if {
	not input.resource.type == "pipeline"
} else := "unsupported action" if {
	not input.action.name in {"read", "transition"}
} else := "invalid state transition" if {
	input.action.name == "transition"
	not valid_transition
} else := "anonymous access denied" if {
	subject.is_anonymous
} else := "missing pipeline scope for requesting client" if {
	subject.is_user
	not subject.has_any_scope(pipeline_scopes)
} else := "insufficient privileges for transition" if {
	subject.is_user
} else := "insufficient scope for transition" if {
	subject.is_service
} else := "unknown subject type"
