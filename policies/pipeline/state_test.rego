# Generated from an independent table: every (from, to) pair of the six states for each kind
# of subject, plus reads and malformed requests.
package rec.pipeline.state_test

import data.rec.pipeline.state

user(groups, scopes) := {"id": "u-1", "type": "user", "groups": groups, "scopes": scopes, "claims": {}}

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "claims": {}}

move(subject, from, to) := {
	"subject": subject,
	"resource": {"type": "pipeline", "id": "p-1", "attributes": {}},
	"action": {"name": "transition", "context": {"from_state": from, "to_state": to}},
}

test_anonymous_pending_to_pending_denied if {
	inp := move(null, "pending", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_pending_to_started_denied if {
	inp := move(null, "pending", "started")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_pending_to_running_denied if {
	inp := move(null, "pending", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_pending_to_completed_denied if {
	inp := move(null, "pending", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_pending_to_failed_denied if {
	inp := move(null, "pending", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_pending_to_cancelled_denied if {
	inp := move(null, "pending", "cancelled")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_started_to_pending_denied if {
	inp := move(null, "started", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_started_to_started_denied if {
	inp := move(null, "started", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_started_to_running_denied if {
	inp := move(null, "started", "running")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_started_to_completed_denied if {
	inp := move(null, "started", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_started_to_failed_denied if {
	inp := move(null, "started", "failed")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_started_to_cancelled_denied if {
	inp := move(null, "started", "cancelled")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_running_to_pending_denied if {
	inp := move(null, "running", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_running_to_started_denied if {
	inp := move(null, "running", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_running_to_running_denied if {
	inp := move(null, "running", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_running_to_completed_denied if {
	inp := move(null, "running", "completed")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_running_to_failed_denied if {
	inp := move(null, "running", "failed")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_running_to_cancelled_denied if {
	inp := move(null, "running", "cancelled")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_completed_to_pending_denied if {
	inp := move(null, "completed", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_completed_to_started_denied if {
	inp := move(null, "completed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_completed_to_running_denied if {
	inp := move(null, "completed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_completed_to_completed_denied if {
	inp := move(null, "completed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_completed_to_failed_denied if {
	inp := move(null, "completed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_completed_to_cancelled_denied if {
	inp := move(null, "completed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_failed_to_pending_denied if {
	inp := move(null, "failed", "pending")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_failed_to_started_denied if {
	inp := move(null, "failed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_failed_to_running_denied if {
	inp := move(null, "failed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_failed_to_completed_denied if {
	inp := move(null, "failed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_failed_to_failed_denied if {
	inp := move(null, "failed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_failed_to_cancelled_denied if {
	inp := move(null, "failed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_cancelled_to_pending_denied if {
	inp := move(null, "cancelled", "pending")
	state.allow == false with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_anonymous_cancelled_to_started_denied if {
	inp := move(null, "cancelled", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_cancelled_to_running_denied if {
	inp := move(null, "cancelled", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_cancelled_to_completed_denied if {
	inp := move(null, "cancelled", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_cancelled_to_failed_denied if {
	inp := move(null, "cancelled", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_anonymous_cancelled_to_cancelled_denied if {
	inp := move(null, "cancelled", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_pending_to_pending_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "pending", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_pending_to_started_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "pending", "started")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_pending_to_running_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "pending", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_pending_to_completed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "pending", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_pending_to_failed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "pending", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_pending_to_cancelled_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "pending", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_started_to_pending_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "started", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_started_to_started_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "started", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_started_to_running_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "started", "running")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_started_to_completed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "started", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_started_to_failed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "started", "failed")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_started_to_cancelled_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "started", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_running_to_pending_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "running", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_running_to_started_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "running", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_running_to_running_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "running", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_running_to_completed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "running", "completed")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_running_to_failed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "running", "failed")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_running_to_cancelled_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "running", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_completed_to_pending_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "completed", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_completed_to_started_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "completed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_completed_to_running_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "completed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_completed_to_completed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "completed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_completed_to_failed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "completed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_completed_to_cancelled_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "completed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_failed_to_pending_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "failed", "pending")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_failed_to_started_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "failed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_failed_to_running_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "failed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_failed_to_completed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "failed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_failed_to_failed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "failed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_failed_to_cancelled_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "failed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_cancelled_to_pending_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "cancelled", "pending")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_viewer_cancelled_to_started_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "cancelled", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_cancelled_to_running_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "cancelled", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_cancelled_to_completed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "cancelled", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_cancelled_to_failed_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "cancelled", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_viewer_cancelled_to_cancelled_denied if {
	inp := move(user(["viewers"], ["pipeline.execute"]), "cancelled", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_pending_to_pending_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "pending", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_pending_to_started_allowed if {
	inp := move(user(["editors"], ["pipeline.execute"]), "pending", "started")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_editor_pending_to_running_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "pending", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_pending_to_completed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "pending", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_pending_to_failed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "pending", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_pending_to_cancelled_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "pending", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_editor_started_to_pending_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "started", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_started_to_started_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "started", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_started_to_running_allowed if {
	inp := move(user(["editors"], ["pipeline.execute"]), "started", "running")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_editor_started_to_completed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "started", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_started_to_failed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "started", "failed")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_editor_started_to_cancelled_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "started", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_editor_running_to_pending_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "running", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_running_to_started_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "running", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_running_to_running_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "running", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_running_to_completed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "running", "completed")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_editor_running_to_failed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "running", "failed")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_editor_running_to_cancelled_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "running", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_editor_completed_to_pending_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "completed", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_completed_to_started_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "completed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_completed_to_running_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "completed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_completed_to_completed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "completed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_completed_to_failed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "completed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_completed_to_cancelled_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "completed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_failed_to_pending_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "failed", "pending")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_editor_failed_to_started_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "failed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_failed_to_running_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "failed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_failed_to_completed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "failed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_failed_to_failed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "failed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_failed_to_cancelled_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "failed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_cancelled_to_pending_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "cancelled", "pending")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_editor_cancelled_to_started_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "cancelled", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_cancelled_to_running_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "cancelled", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_cancelled_to_completed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "cancelled", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_cancelled_to_failed_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "cancelled", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_editor_cancelled_to_cancelled_denied if {
	inp := move(user(["editors"], ["pipeline.execute"]), "cancelled", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_pending_to_pending_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "pending", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_pending_to_started_allowed if {
	inp := move(user(["managers"], ["pipeline.execute"]), "pending", "started")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_manager_pending_to_running_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "pending", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_pending_to_completed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "pending", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_pending_to_failed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "pending", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_pending_to_cancelled_allowed if {
	inp := move(user(["managers"], ["pipeline.execute"]), "pending", "cancelled")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_manager_started_to_pending_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "started", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_started_to_started_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "started", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_started_to_running_allowed if {
	inp := move(user(["managers"], ["pipeline.execute"]), "started", "running")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_manager_started_to_completed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "started", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_started_to_failed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "started", "failed")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_manager_started_to_cancelled_allowed if {
	inp := move(user(["managers"], ["pipeline.execute"]), "started", "cancelled")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_manager_running_to_pending_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "running", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_running_to_started_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "running", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_running_to_running_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "running", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_running_to_completed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "running", "completed")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_manager_running_to_failed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "running", "failed")
	state.allow == false with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}

test_manager_running_to_cancelled_allowed if {
	inp := move(user(["managers"], ["pipeline.execute"]), "running", "cancelled")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_manager_completed_to_pending_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "completed", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_completed_to_started_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "completed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_completed_to_running_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "completed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_completed_to_completed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "completed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_completed_to_failed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "completed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_completed_to_cancelled_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "completed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_failed_to_pending_allowed if {
	inp := move(user(["managers"], ["pipeline.execute"]), "failed", "pending")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_manager_failed_to_started_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "failed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_failed_to_running_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "failed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_failed_to_completed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "failed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_failed_to_failed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "failed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_failed_to_cancelled_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "failed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_cancelled_to_pending_allowed if {
	inp := move(user(["managers"], ["pipeline.execute"]), "cancelled", "pending")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_manager_cancelled_to_started_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "cancelled", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_cancelled_to_running_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "cancelled", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_cancelled_to_completed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "cancelled", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_cancelled_to_failed_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "cancelled", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_manager_cancelled_to_cancelled_denied if {
	inp := move(user(["managers"], ["pipeline.execute"]), "cancelled", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_pending_to_pending_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "pending", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_pending_to_started_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "pending", "started")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_pending_to_running_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "pending", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_pending_to_completed_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "pending", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_pending_to_failed_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "pending", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_pending_to_cancelled_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "pending", "cancelled")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_started_to_pending_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "started", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_started_to_started_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "started", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_started_to_running_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "started", "running")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_started_to_completed_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "started", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_started_to_failed_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "started", "failed")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_started_to_cancelled_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "started", "cancelled")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_running_to_pending_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "running", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_running_to_started_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "running", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_running_to_running_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "running", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_running_to_completed_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "running", "completed")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_running_to_failed_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "running", "failed")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_running_to_cancelled_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "running", "cancelled")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_completed_to_pending_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "completed", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_completed_to_started_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "completed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_completed_to_running_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "completed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_completed_to_completed_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "completed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_completed_to_failed_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "completed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_completed_to_cancelled_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "completed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_failed_to_pending_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "failed", "pending")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_failed_to_started_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "failed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_failed_to_running_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "failed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_failed_to_completed_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "failed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_failed_to_failed_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "failed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_failed_to_cancelled_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "failed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_cancelled_to_pending_allowed if {
	inp := move(user(["admins"], ["pipeline.admin"]), "cancelled", "pending")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_admin_cancelled_to_started_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "cancelled", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_cancelled_to_running_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "cancelled", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_cancelled_to_completed_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "cancelled", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_cancelled_to_failed_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "cancelled", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_cancelled_to_cancelled_denied if {
	inp := move(user(["admins"], ["pipeline.admin"]), "cancelled", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_pending_to_pending_denied if {
	inp := move(user(["admins"], []), "pending", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_pending_to_started_denied if {
	inp := move(user(["admins"], []), "pending", "started")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_pending_to_running_denied if {
	inp := move(user(["admins"], []), "pending", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_pending_to_completed_denied if {
	inp := move(user(["admins"], []), "pending", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_pending_to_failed_denied if {
	inp := move(user(["admins"], []), "pending", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_pending_to_cancelled_denied if {
	inp := move(user(["admins"], []), "pending", "cancelled")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_started_to_pending_denied if {
	inp := move(user(["admins"], []), "started", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_started_to_started_denied if {
	inp := move(user(["admins"], []), "started", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_started_to_running_denied if {
	inp := move(user(["admins"], []), "started", "running")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_started_to_completed_denied if {
	inp := move(user(["admins"], []), "started", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_started_to_failed_denied if {
	inp := move(user(["admins"], []), "started", "failed")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_started_to_cancelled_denied if {
	inp := move(user(["admins"], []), "started", "cancelled")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_running_to_pending_denied if {
	inp := move(user(["admins"], []), "running", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_running_to_started_denied if {
	inp := move(user(["admins"], []), "running", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_running_to_running_denied if {
	inp := move(user(["admins"], []), "running", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_running_to_completed_denied if {
	inp := move(user(["admins"], []), "running", "completed")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_running_to_failed_denied if {
	inp := move(user(["admins"], []), "running", "failed")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_running_to_cancelled_denied if {
	inp := move(user(["admins"], []), "running", "cancelled")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_completed_to_pending_denied if {
	inp := move(user(["admins"], []), "completed", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_completed_to_started_denied if {
	inp := move(user(["admins"], []), "completed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_completed_to_running_denied if {
	inp := move(user(["admins"], []), "completed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_completed_to_completed_denied if {
	inp := move(user(["admins"], []), "completed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_completed_to_failed_denied if {
	inp := move(user(["admins"], []), "completed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_completed_to_cancelled_denied if {
	inp := move(user(["admins"], []), "completed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_failed_to_pending_denied if {
	inp := move(user(["admins"], []), "failed", "pending")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_failed_to_started_denied if {
	inp := move(user(["admins"], []), "failed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_failed_to_running_denied if {
	inp := move(user(["admins"], []), "failed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_failed_to_completed_denied if {
	inp := move(user(["admins"], []), "failed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_failed_to_failed_denied if {
	inp := move(user(["admins"], []), "failed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_failed_to_cancelled_denied if {
	inp := move(user(["admins"], []), "failed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_cancelled_to_pending_denied if {
	inp := move(user(["admins"], []), "cancelled", "pending")
	state.allow == false with input as inp
	state.reason == "missing pipeline scope for requesting client" with input as inp
}

test_admin_noscope_cancelled_to_started_denied if {
	inp := move(user(["admins"], []), "cancelled", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_cancelled_to_running_denied if {
	inp := move(user(["admins"], []), "cancelled", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_cancelled_to_completed_denied if {
	inp := move(user(["admins"], []), "cancelled", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_cancelled_to_failed_denied if {
	inp := move(user(["admins"], []), "cancelled", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_admin_noscope_cancelled_to_cancelled_denied if {
	inp := move(user(["admins"], []), "cancelled", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_pending_to_pending_denied if {
	inp := move(service(["pipeline.execute"]), "pending", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_pending_to_started_allowed if {
	inp := move(service(["pipeline.execute"]), "pending", "started")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_execute_pending_to_running_denied if {
	inp := move(service(["pipeline.execute"]), "pending", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_pending_to_completed_denied if {
	inp := move(service(["pipeline.execute"]), "pending", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_pending_to_failed_denied if {
	inp := move(service(["pipeline.execute"]), "pending", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_pending_to_cancelled_denied if {
	inp := move(service(["pipeline.execute"]), "pending", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_execute_started_to_pending_denied if {
	inp := move(service(["pipeline.execute"]), "started", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_started_to_started_denied if {
	inp := move(service(["pipeline.execute"]), "started", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_started_to_running_allowed if {
	inp := move(service(["pipeline.execute"]), "started", "running")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_execute_started_to_completed_denied if {
	inp := move(service(["pipeline.execute"]), "started", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_started_to_failed_allowed if {
	inp := move(service(["pipeline.execute"]), "started", "failed")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_execute_started_to_cancelled_denied if {
	inp := move(service(["pipeline.execute"]), "started", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_execute_running_to_pending_denied if {
	inp := move(service(["pipeline.execute"]), "running", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_running_to_started_denied if {
	inp := move(service(["pipeline.execute"]), "running", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_running_to_running_denied if {
	inp := move(service(["pipeline.execute"]), "running", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_running_to_completed_allowed if {
	inp := move(service(["pipeline.execute"]), "running", "completed")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_execute_running_to_failed_allowed if {
	inp := move(service(["pipeline.execute"]), "running", "failed")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_execute_running_to_cancelled_denied if {
	inp := move(service(["pipeline.execute"]), "running", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_execute_completed_to_pending_denied if {
	inp := move(service(["pipeline.execute"]), "completed", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_completed_to_started_denied if {
	inp := move(service(["pipeline.execute"]), "completed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_completed_to_running_denied if {
	inp := move(service(["pipeline.execute"]), "completed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_completed_to_completed_denied if {
	inp := move(service(["pipeline.execute"]), "completed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_completed_to_failed_denied if {
	inp := move(service(["pipeline.execute"]), "completed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_completed_to_cancelled_denied if {
	inp := move(service(["pipeline.execute"]), "completed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_failed_to_pending_denied if {
	inp := move(service(["pipeline.execute"]), "failed", "pending")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_execute_failed_to_started_denied if {
	inp := move(service(["pipeline.execute"]), "failed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_failed_to_running_denied if {
	inp := move(service(["pipeline.execute"]), "failed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_failed_to_completed_denied if {
	inp := move(service(["pipeline.execute"]), "failed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_failed_to_failed_denied if {
	inp := move(service(["pipeline.execute"]), "failed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_failed_to_cancelled_denied if {
	inp := move(service(["pipeline.execute"]), "failed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_cancelled_to_pending_denied if {
	inp := move(service(["pipeline.execute"]), "cancelled", "pending")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_execute_cancelled_to_started_denied if {
	inp := move(service(["pipeline.execute"]), "cancelled", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_cancelled_to_running_denied if {
	inp := move(service(["pipeline.execute"]), "cancelled", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_cancelled_to_completed_denied if {
	inp := move(service(["pipeline.execute"]), "cancelled", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_cancelled_to_failed_denied if {
	inp := move(service(["pipeline.execute"]), "cancelled", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_execute_cancelled_to_cancelled_denied if {
	inp := move(service(["pipeline.execute"]), "cancelled", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_pending_to_pending_denied if {
	inp := move(service(["pipeline.admin"]), "pending", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_pending_to_started_allowed if {
	inp := move(service(["pipeline.admin"]), "pending", "started")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_pending_to_running_denied if {
	inp := move(service(["pipeline.admin"]), "pending", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_pending_to_completed_denied if {
	inp := move(service(["pipeline.admin"]), "pending", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_pending_to_failed_denied if {
	inp := move(service(["pipeline.admin"]), "pending", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_pending_to_cancelled_allowed if {
	inp := move(service(["pipeline.admin"]), "pending", "cancelled")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_started_to_pending_denied if {
	inp := move(service(["pipeline.admin"]), "started", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_started_to_started_denied if {
	inp := move(service(["pipeline.admin"]), "started", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_started_to_running_allowed if {
	inp := move(service(["pipeline.admin"]), "started", "running")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_started_to_completed_denied if {
	inp := move(service(["pipeline.admin"]), "started", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_started_to_failed_allowed if {
	inp := move(service(["pipeline.admin"]), "started", "failed")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_started_to_cancelled_allowed if {
	inp := move(service(["pipeline.admin"]), "started", "cancelled")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_running_to_pending_denied if {
	inp := move(service(["pipeline.admin"]), "running", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_running_to_started_denied if {
	inp := move(service(["pipeline.admin"]), "running", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_running_to_running_denied if {
	inp := move(service(["pipeline.admin"]), "running", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_running_to_completed_allowed if {
	inp := move(service(["pipeline.admin"]), "running", "completed")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_running_to_failed_allowed if {
	inp := move(service(["pipeline.admin"]), "running", "failed")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_running_to_cancelled_allowed if {
	inp := move(service(["pipeline.admin"]), "running", "cancelled")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_completed_to_pending_denied if {
	inp := move(service(["pipeline.admin"]), "completed", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_completed_to_started_denied if {
	inp := move(service(["pipeline.admin"]), "completed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_completed_to_running_denied if {
	inp := move(service(["pipeline.admin"]), "completed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_completed_to_completed_denied if {
	inp := move(service(["pipeline.admin"]), "completed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_completed_to_failed_denied if {
	inp := move(service(["pipeline.admin"]), "completed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_completed_to_cancelled_denied if {
	inp := move(service(["pipeline.admin"]), "completed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_failed_to_pending_allowed if {
	inp := move(service(["pipeline.admin"]), "failed", "pending")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_failed_to_started_denied if {
	inp := move(service(["pipeline.admin"]), "failed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_failed_to_running_denied if {
	inp := move(service(["pipeline.admin"]), "failed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_failed_to_completed_denied if {
	inp := move(service(["pipeline.admin"]), "failed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_failed_to_failed_denied if {
	inp := move(service(["pipeline.admin"]), "failed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_failed_to_cancelled_denied if {
	inp := move(service(["pipeline.admin"]), "failed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_cancelled_to_pending_allowed if {
	inp := move(service(["pipeline.admin"]), "cancelled", "pending")
	state.allow == true with input as inp
	state.reason == "valid state transition authorized" with input as inp
}

test_svc_admin_cancelled_to_started_denied if {
	inp := move(service(["pipeline.admin"]), "cancelled", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_cancelled_to_running_denied if {
	inp := move(service(["pipeline.admin"]), "cancelled", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_cancelled_to_completed_denied if {
	inp := move(service(["pipeline.admin"]), "cancelled", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_cancelled_to_failed_denied if {
	inp := move(service(["pipeline.admin"]), "cancelled", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_admin_cancelled_to_cancelled_denied if {
	inp := move(service(["pipeline.admin"]), "cancelled", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_pending_to_pending_denied if {
	inp := move(service(["pipeline.status"]), "pending", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_pending_to_started_denied if {
	inp := move(service(["pipeline.status"]), "pending", "started")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_pending_to_running_denied if {
	inp := move(service(["pipeline.status"]), "pending", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_pending_to_completed_denied if {
	inp := move(service(["pipeline.status"]), "pending", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_pending_to_failed_denied if {
	inp := move(service(["pipeline.status"]), "pending", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_pending_to_cancelled_denied if {
	inp := move(service(["pipeline.status"]), "pending", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_started_to_pending_denied if {
	inp := move(service(["pipeline.status"]), "started", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_started_to_started_denied if {
	inp := move(service(["pipeline.status"]), "started", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_started_to_running_denied if {
	inp := move(service(["pipeline.status"]), "started", "running")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_started_to_completed_denied if {
	inp := move(service(["pipeline.status"]), "started", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_started_to_failed_denied if {
	inp := move(service(["pipeline.status"]), "started", "failed")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_started_to_cancelled_denied if {
	inp := move(service(["pipeline.status"]), "started", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_running_to_pending_denied if {
	inp := move(service(["pipeline.status"]), "running", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_running_to_started_denied if {
	inp := move(service(["pipeline.status"]), "running", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_running_to_running_denied if {
	inp := move(service(["pipeline.status"]), "running", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_running_to_completed_denied if {
	inp := move(service(["pipeline.status"]), "running", "completed")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_running_to_failed_denied if {
	inp := move(service(["pipeline.status"]), "running", "failed")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_running_to_cancelled_denied if {
	inp := move(service(["pipeline.status"]), "running", "cancelled")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_completed_to_pending_denied if {
	inp := move(service(["pipeline.status"]), "completed", "pending")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_completed_to_started_denied if {
	inp := move(service(["pipeline.status"]), "completed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_completed_to_running_denied if {
	inp := move(service(["pipeline.status"]), "completed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_completed_to_completed_denied if {
	inp := move(service(["pipeline.status"]), "completed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_completed_to_failed_denied if {
	inp := move(service(["pipeline.status"]), "completed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_completed_to_cancelled_denied if {
	inp := move(service(["pipeline.status"]), "completed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_failed_to_pending_denied if {
	inp := move(service(["pipeline.status"]), "failed", "pending")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_failed_to_started_denied if {
	inp := move(service(["pipeline.status"]), "failed", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_failed_to_running_denied if {
	inp := move(service(["pipeline.status"]), "failed", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_failed_to_completed_denied if {
	inp := move(service(["pipeline.status"]), "failed", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_failed_to_failed_denied if {
	inp := move(service(["pipeline.status"]), "failed", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_failed_to_cancelled_denied if {
	inp := move(service(["pipeline.status"]), "failed", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_cancelled_to_pending_denied if {
	inp := move(service(["pipeline.status"]), "cancelled", "pending")
	state.allow == false with input as inp
	state.reason == "insufficient scope for transition" with input as inp
}

test_svc_status_cancelled_to_started_denied if {
	inp := move(service(["pipeline.status"]), "cancelled", "started")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_cancelled_to_running_denied if {
	inp := move(service(["pipeline.status"]), "cancelled", "running")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_cancelled_to_completed_denied if {
	inp := move(service(["pipeline.status"]), "cancelled", "completed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_cancelled_to_failed_denied if {
	inp := move(service(["pipeline.status"]), "cancelled", "failed")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_svc_status_cancelled_to_cancelled_denied if {
	inp := move(service(["pipeline.status"]), "cancelled", "cancelled")
	state.allow == false with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_read_by_authenticated_user if {
	inp := {"subject": user([], []), "resource": {"type": "pipeline", "id": "p"}, "action": {"name": "read"}}
	state.allow with input as inp
	state.reason == "authenticated users can read pipeline state" with input as inp
}

test_read_by_service if {
	state.allow with input as {"subject": service([]), "resource": {"type": "pipeline", "id": "p"}, "action": {"name": "read"}}
}

test_read_by_anonymous_denied if {
	inp := {"subject": null, "resource": {"type": "pipeline", "id": "p"}, "action": {"name": "read"}}
	not state.allow with input as inp
	state.reason == "anonymous access denied" with input as inp
}

test_unknown_state_is_invalid if {
	inp := move(user(["admins"], ["pipeline.admin"]), "pending", "exploded")
	not state.allow with input as inp
	state.reason == "invalid state transition" with input as inp
}

test_wrong_resource_type if {
	inp := {"subject": user(["admins"], ["pipeline.admin"]), "resource": {"type": "dataset", "id": "p"}, "action": {"name": "transition", "context": {"from_state": "pending", "to_state": "started"}}}
	not state.allow with input as inp
	state.reason == "resource type must be pipeline" with input as inp
}

test_unsupported_action if {
	inp := {"subject": user(["admins"], ["pipeline.admin"]), "resource": {"type": "pipeline", "id": "p"}, "action": {"name": "delete"}}
	not state.allow with input as inp
	state.reason == "unsupported action" with input as inp
}

test_admin_scope_does_not_widen_user_level if {
	inp := move(user(["editors"], ["pipeline.admin"]), "running", "cancelled")
	not state.allow with input as inp
	state.reason == "insufficient privileges for transition" with input as inp
}
