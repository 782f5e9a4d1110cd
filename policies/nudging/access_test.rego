package rec.nudging.access_test

import data.rec.common.dev_identities_test as dev
import data.rec.nudging.access

user(id, groups, scopes) := {"id": id, "type": "user", "groups": groups, "scopes": scopes, "claims": {}}

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "claims": {}}

req(subject, type, action, owner) := {
	"subject": subject,
	"resource": {"type": type, "id": owner, "attributes": {"owner_id": owner}},
	"action": {"name": action, "context": {}},
}

decision(inp) := [a, r] if {
	a := access.allow with input as inp
	r := access.reason with input as inp
}

alice := user("alice", ["viewers"], [])

admin_user := user("root", ["admins"], ["nudging.admin"])

# --- ingest

test_service_with_ingest_scope_ingests if {
	decision(req(service(["nudging.ingest"]), "nudging.event", "ingest", "alice")) == [true, "service may ingest nudging events"]
}

test_service_with_admin_scope_ingests if {
	decision(req(service(["nudging.admin"]), "nudging.scheduled_event", "ingest", "")) == [true, "service may ingest nudging events"]
}

test_service_without_scope_cannot_ingest if {
	decision(req(service(["dt.read"]), "nudging.event", "ingest", "alice")) == [false, "missing nudging.ingest scope"]
}

test_users_never_ingest if {
	decision(req(user("root", ["admins"], ["nudging.ingest", "nudging.admin"]), "nudging.event", "ingest", "root")) == [false, "users may not ingest events"]
}

test_anonymous_cannot_ingest if {
	decision(req(null, "nudging.event", "ingest", "alice")) == [false, "anonymous access denied"]
}

# --- own data

test_owner_reads_own_notifications if {
	decision(req(alice, "nudging.notification", "read", "alice")) == [true, "user accessing own notifications"]
}

test_owner_writes_own_preferences if {
	decision(req(alice, "nudging.preferences", "write", "alice")) == [true, "user accessing own notifications"]
}

test_owner_sends_test_push if {
	decision(req(alice, "nudging.subscription", "send_test", "alice")) == [true, "user accessing own notifications"]
}

test_other_user_denied if {
	decision(req(user("bob", ["viewers"], []), "nudging.notification", "read", "alice")) == [false, "not the owner of this data"]
}

test_admin_group_without_scope_denied if {
	decision(req(user("root", ["admins"], []), "nudging.preferences", "read", "alice")) == [false, "not the owner of this data"]
}

test_admin_scope_without_group_denied if {
	decision(req(user("eve", ["viewers"], ["nudging.admin"]), "nudging.preferences", "read", "alice")) == [false, "not the owner of this data"]
}

test_admin_user_reads_anyone if {
	decision(req(admin_user, "nudging.notification", "read", "alice")) == [true, "nudging administrator"]
}

test_admin_service_writes_anyone if {
	decision(req(service(["nudging.admin"]), "nudging.preferences", "write", "alice")) == [true, "nudging administrator"]
}

test_ingest_service_cannot_read_users_data if {
	decision(req(service(["nudging.ingest"]), "nudging.notification", "read", "alice")) == [false, "missing nudging.admin scope"]
}

test_recipient_group_owned_by_nobody if {
	decision(req(user("email-ingest:0123456789abcdef", [], []), "nudging.notification", "read", "email-ingest:0123456789abcdef")) == [false, "not the owner of this data"]
	decision(req(service(["nudging.admin"]), "nudging.notification", "read", "email-ingest:0123456789abcdef")) == [true, "nudging administrator"]
}

test_missing_owner_denied if {
	decision({"subject": alice, "resource": {"type": "nudging.notification", "id": "", "attributes": {}}, "action": {"name": "read", "context": {}}}) == [false, "not the owner of this data"]
}

test_anonymous_cannot_read if {
	decision(req(null, "nudging.notification", "read", "alice")) == [false, "anonymous access denied"]
}

test_unknown_action if {
	decision(req(admin_user, "nudging.notification", "delete_everything", "alice")) == [false, "unsupported action"]
}

test_other_resource_type if {
	decision(req(admin_user, "dataset", "read", "alice")) == [false, "resource type must be a nudging resource"]
}

# --- the identities of dev/identities.yaml, as their tokens make them

test_dev_grid_and_flexibility_ingest if {
	decision(req(dev.services["svc-grid"], "nudging.event", "ingest", "email-ingest:0123456789abcdef"))[0] == true
	decision(req(dev.services["svc-flexibility"], "nudging.scheduled_event", "ingest", ""))[0] == true
}

test_dev_services_without_nudging_scope_cannot_ingest if {
	decision(req(dev.services["svc-assistant"], "nudging.event", "ingest", "x")) == [false, "missing nudging.ingest scope"]
	decision(req(dev.services["svc-no-scopes"], "nudging.event", "ingest", "x")) == [false, "missing nudging.ingest scope"]
}

test_dev_participant_through_web_app_reads_own_only if {
	me := dev.users.participant["rec-frontend"]
	decision(req(me, "nudging.notification", "read", me.id)) == [true, "user accessing own notifications"]
	other := dev.users["participant-consumer"]["rec-frontend"].id
	decision(req(me, "nudging.notification", "read", other)) == [false, "not the owner of this data"]
}

test_dev_admin_needs_the_cli_client_scope if {
	other := dev.users.participant["rec-frontend"].id
	decision(req(dev.users.admin["rec-cli"], "nudging.preferences", "write", other)) == [true, "nudging administrator"]
	decision(req(dev.users.admin["rec-frontend"], "nudging.preferences", "write", other)) == [false, "not the owner of this data"]
}

test_dev_nudging_service_is_administrator if {
	decision(req(dev.services["svc-nudging"], "nudging.notification", "read", "anyone")) == [true, "nudging administrator"]
}

test_dev_ingest_clients_are_not_administrators if {
	decision(req(dev.services["svc-grid"], "nudging.notification", "read", "anyone")) == [false, "missing nudging.admin scope"]
	decision(req(dev.services["svc-participant-gateway"], "nudging.preferences", "read", "anyone")) == [false, "missing nudging.admin scope"]
}
