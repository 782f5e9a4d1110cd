package rec.participant_gateway.access_test

import data.rec.common.dev_identities_test as dev
import data.rec.participant_gateway.access

req(subject, area, action, owner) := {
	"subject": subject,
	"resource": {"type": concat("", ["participant_gateway.", area]), "id": owner, "attributes": {"owner_id": owner}},
	"action": {"name": action, "context": {}},
}

decision(inp) := [a, r] if {
	a := access.allow with input as inp
	r := access.reason with input as inp
}

participant := dev.users.participant["rec-frontend"]

consumer := dev.users["participant-consumer"]["rec-frontend"]

nogroup := dev.users.nogroup["rec-frontend"]

own(subject, area, action) := req(subject, area, action, subject.id)

test_participant_reads_and_writes_every_area if {
	every area in access.areas {
		every action in access.actions {
			decision(own(participant, area, action)) == [true, "user acting on own data"]
		}
	}
}

# Membership of a community is the digital twin's business, not a token's: a user without any
# group or organization still reaches the app (and learns from /api/overview that they are no member).
test_user_without_groups_admitted if decision(own(nogroup, "profile", "read")) == [true, "user acting on own data"]

test_user_with_every_scope_still_only_own_data if {
	decision(req(dev.users.admin["rec-cli"], "settings", "write", participant.id)) == [false, "users act on their own data only"]
}

test_other_users_data_refused if {
	decision(req(consumer, "notifications", "read", participant.id)) == [false, "users act on their own data only"]
}

test_service_account_refused if {
	decision(own(dev.services["svc-participant-gateway"], "overview", "read")) == [
		false,
		"service accounts call the platform's services directly, not the participant gateway",
	]
}

test_service_with_admin_scopes_refused if {
	decision(own(dev.services["svc-nudging"], "notifications", "read")) == [
		false,
		"service accounts call the platform's services directly, not the participant gateway",
	]
}

test_anonymous_refused if decision(req(null, "profile", "read", "someone")) == [false, "anonymous access denied"]

test_missing_subject_refused if {
	decision({"resource": {"type": "participant_gateway.profile", "attributes": {"owner_id": "x"}}, "action": {"name": "read"}}) == [
		false,
		"anonymous access denied",
	]
}

test_unknown_area_refused if decision(own(participant, "grid", "read")) == [false, "unknown resource type"]

test_other_package_resource_refused if {
	inp := {"subject": participant, "resource": {"type": "userdata", "attributes": {"owner_id": participant.id}}, "action": {"name": "read"}}
	decision(inp) == [false, "unknown resource type"]
}

test_unknown_action_refused if decision(own(participant, "profile", "delete")) == [false, "unsupported action"]

test_missing_owner_refused if {
	inp := {"subject": participant, "resource": {"type": "participant_gateway.profile", "attributes": {}}, "action": {"name": "read"}}
	decision(inp) == [false, "users act on their own data only"]
}
