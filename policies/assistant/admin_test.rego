package rec.assistant.admin_test

import data.rec.assistant.admin
import data.rec.common.dev_identities_test as dev

req(subject, operation) := {
	"subject": subject,
	"resource": {"type": "assistant", "id": operation, "attributes": {}},
	"action": {"name": operation, "context": {}},
}

user(groups, scopes) := {"id": "u-1", "type": "user", "groups": groups, "scopes": scopes, "claims": {}}

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "claims": {}}

decision(inp) := [a, r] if {
	a := admin.allow with input as inp
	r := admin.reason with input as inp
}

test_admins_group_allowed if {
	every op in admin.operations {
		decision(req(user(["admins"], []), op)) == [true, "member of an admin group"]
	}
}

test_admin_group_allowed if decision(req(user(["admin"], []), "reload")) == [true, "member of an admin group"]

test_scope_allows_a_user if decision(req(user(["viewers"], ["assistant.admin"]), "uploads")) == [true, "holds the assistant.admin scope"]

test_scope_allows_a_service if decision(req(service(["assistant.admin"]), "training_sync")) == [true, "holds the assistant.admin scope"]

test_group_wins_over_scope_reason if decision(req(user(["admins"], ["assistant.admin"]), "ingest")) == [true, "member of an admin group"]

test_viewer_refused if decision(req(user(["viewers"], ["userdata.read"]), "uploads")) == [false, "requires the admin or admins group, or the assistant.admin scope"]

test_managers_are_not_admins if decision(req(user(["managers"], []), "reload")) == [false, "requires the admin or admins group, or the assistant.admin scope"]

# Groups are for users: a service account named into "admins" has no rights from it.
test_service_groups_ignored if {
	svc := {"id": "svc-1", "type": "service", "groups": ["admins"], "scopes": [], "claims": {}}
	decision(req(svc, "reload")) == [false, "requires the admin or admins group, or the assistant.admin scope"]
}

test_anonymous_refused if decision(req(null, "uploads")) == [false, "anonymous access denied"]

test_missing_subject_refused if {
	inp := {"resource": {"type": "assistant", "id": "reload"}, "action": {"name": "reload"}}
	decision(inp) == [false, "anonymous access denied"]
}

test_unknown_operation_refused if decision(req(user(["admins"], []), "drop_everything")) == [false, "unknown assistant operation"]

test_other_resource_type_refused if {
	inp := {"subject": user(["admins"], []), "resource": {"type": "dataset", "id": "x"}, "action": {"name": "reload"}}
	decision(inp) == [false, "unknown assistant operation"]
}

# The dev identity provider's tokens, as the service sees them.
test_dev_admin_allowed if decision(req(dev.users.admin["rec-frontend"], "uploads")) == [true, "member of an admin group"]

test_dev_admin_via_cli_allowed if decision(req(dev.users.admin["rec-cli"], "training_sync")) == [true, "member of an admin group"]

test_dev_manager_refused if decision(req(dev.users.manager["rec-cli"], "uploads")) == [false, "requires the admin or admins group, or the assistant.admin scope"]

test_dev_participant_refused if decision(req(dev.users.participant["rec-frontend"], "reload")) == [false, "requires the admin or admins group, or the assistant.admin scope"]

test_dev_assistant_service_refused if decision(req(dev.services["svc-assistant"], "reload")) == [false, "requires the admin or admins group, or the assistant.admin scope"]
