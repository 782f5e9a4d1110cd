package rec.flexibility.access_test

import data.rec.common.dev_identities_test as dev
import data.rec.flexibility.access

participant := dev.users.participant["rec-frontend"]

# The CLI client grants every platform scope, flexibility.admin included: a user is still a user.
participant_cli := dev.users.participant["rec-cli"]

consumer := dev.users["participant-consumer"]["rec-frontend"]

# A user whose client grants nothing of the flexibility service.
nogroup := dev.users.nogroup["rec-frontend"]

flexibility := dev.services["svc-flexibility"]

pipelines := dev.services["svc-pipelines"]

gateway := dev.services["svc-participant-gateway"]

no_scopes := dev.services["svc-no-scopes"]

service(scopes) := {"id": "svc-test", "type": "service", "groups": [], "scopes": scopes, "claims": {}}

commitment(subject, action, owner) := {
	"subject": subject,
	"resource": {"type": "flexibility.commitment", "id": "c-1", "attributes": {"owner_id": owner}},
	"action": {"name": action, "context": {}},
}

# An action over every user's commitments (no owner).
everyone(subject, action) := {
	"subject": subject,
	"resource": {"type": "flexibility.commitment", "id": "*", "attributes": {}},
	"action": {"name": action, "context": {}},
}

suggestion(subject, action, owner) := {
	"subject": subject,
	"resource": {"type": "flexibility.suggestion", "id": "fw-1", "attributes": {"owner_id": owner}},
	"action": {"name": action, "context": {}},
}

decision(inp) := [a, r] if {
	a := access.allow with input as inp
	r := access.reason with input as inp
}

# --- users: their own data, with any token -------------------------------------------------------

test_user_lists_own_suggestions if {
	decision(suggestion(participant, "list", participant.id)) == [true, "user acting on own suggestions"]
}

test_user_answers_own_suggestion if {
	decision(suggestion(participant, "respond", participant.id)) == [true, "user acting on own suggestions"]
}

test_user_acts_on_own_commitments_without_any_flexibility_scope if {
	every a in ["create", "list", "read", "cancel"] {
		decision(commitment(nogroup, a, nogroup.id)) == [true, "user acting on own commitments"]
	}
}

test_user_cannot_touch_another_users_commitments if {
	every a in ["create", "list", "read", "cancel"] {
		decision(commitment(consumer, a, participant.id)) == [false, "not resource owner"]
	}
}

test_user_cannot_answer_another_users_suggestion if {
	decision(suggestion(consumer, "respond", participant.id)) == [false, "not resource owner"]
}

test_user_cannot_list_everyones_commitments if {
	decision(everyone(participant, "list")) == [false, "users act on their own commitments only"]
}

test_user_cannot_settle_take_pending_or_export if {
	decision(commitment(participant, "settle", participant.id)) == [false, "settle is for service accounts only"]
	decision(everyone(participant, "pending")) == [false, "pending is for service accounts only"]
	decision(everyone(participant, "export")) == [false, "export is for service accounts only"]
}

# Scopes do not turn a user into a service: the CLI's flexibility.admin is not an admin's.
test_user_with_admin_scope_is_still_only_a_user if {
	decision(everyone(participant_cli, "list")) == [false, "users act on their own commitments only"]
	decision(commitment(participant_cli, "read", consumer.id)) == [false, "not resource owner"]
	decision(everyone(participant_cli, "settle")) == [false, "settle is for service accounts only"]
}

# --- services: by scope ---------------------------------------------------------------------------

test_flexibility_service_is_admin if {
	every a in ["create", "list", "read", "cancel", "pending", "settle", "export"] {
		decision(everyone(flexibility, a)) == [true, "service access granted"]
	}
	decision(commitment(flexibility, "read", participant.id)) == [true, "service access granted"]
}

test_pipelines_export_only if {
	decision(everyone(pipelines, "export")) == [true, "service access granted"]
	decision(everyone(pipelines, "list")) == [false, "service account needs the scope flexibility.admin or flexibility.commitments.read"]
	decision(everyone(pipelines, "pending")) == [false, "service account needs the scope flexibility.admin"]
}

test_read_scope_reads_and_lists_only if {
	reader := service(["flexibility.commitments.read"])
	decision(everyone(reader, "list")) == [true, "service access granted"]
	decision(commitment(reader, "read", participant.id)) == [true, "service access granted"]
	decision(commitment(reader, "cancel", participant.id)) == [false, "service account needs the scope flexibility.admin or flexibility.commitments.write"]
	decision(everyone(reader, "export")) == [false, "service account needs the scope flexibility.admin or flexibility.commitments.export"]
}

test_write_scope_creates_and_cancels_only if {
	writer := service(["flexibility.commitments.write"])
	decision(commitment(writer, "create", participant.id)) == [true, "service access granted"]
	decision(commitment(writer, "cancel", participant.id)) == [true, "service access granted"]
	decision(commitment(writer, "read", participant.id)) == [false, "service account needs the scope flexibility.admin or flexibility.commitments.read"]
	decision(commitment(writer, "settle", participant.id)) == [false, "service account needs the scope flexibility.admin"]
}

# The original's rego scopes (flexibility.read / flexibility.write) are issued to nobody: not accepted.
test_unissued_legacy_scopes_grant_nothing if {
	legacy := service(["flexibility.read", "flexibility.write"])
	every a in ["create", "list", "read", "cancel", "pending", "settle", "export"] {
		not access.allow with input as everyone(legacy, a)
	}
}

test_services_without_scopes_are_refused if {
	decision(everyone(no_scopes, "list")) == [false, "service account needs the scope flexibility.admin or flexibility.commitments.read"]
	decision(everyone(gateway, "pending")) == [false, "service account needs the scope flexibility.admin"]
}

test_services_have_no_suggestions if {
	decision(suggestion(flexibility, "list", participant.id)) == [
		false,
		"suggestions are computed with a user's own token: service accounts have none",
	]
}

# --- closed by default ----------------------------------------------------------------------------

test_anonymous_is_refused if {
	decision(commitment(null, "read", participant.id)) == [false, "anonymous access denied"]
	decision({"resource": {"type": "flexibility.commitment", "id": "c-1", "attributes": {}}, "action": {"name": "list"}}) == [
		false,
		"anonymous access denied",
	]
}

test_unknown_action_is_refused if {
	decision(commitment(flexibility, "delete_everything", participant.id)) == [false, "unsupported action"]
	decision(suggestion(participant, "cancel", participant.id)) == [false, "unsupported action"]
}

test_unknown_resource_type_is_refused if {
	inp := {
		"subject": flexibility,
		"resource": {"type": "userdata", "id": "x", "attributes": {}},
		"action": {"name": "read", "context": {}},
	}
	decision(inp) == [false, "resource type must be flexibility.suggestion or flexibility.commitment"]
}

test_owner_must_be_a_string if {
	inp := commitment(participant, "read", [participant.id])
	decision(inp) == [false, "users act on their own commitments only"]
}

test_unknown_subject_type_is_refused if {
	odd := {"id": participant.id, "type": "robot", "groups": [], "scopes": ["flexibility.admin"], "claims": {}}
	decision(commitment(odd, "read", participant.id)) == [false, "unknown subject type"]
}
