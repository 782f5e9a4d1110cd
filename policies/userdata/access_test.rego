package rec.userdata.access_test

import data.rec.userdata.access

user(id, groups, scopes) := {"id": id, "type": "user", "groups": groups, "scopes": scopes, "claims": {}}

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "claims": {}}

req(subject, action, attrs) := {
	"subject": subject,
	"resource": {"type": "userdata", "id": "dash-1", "attributes": object.union({"resource_type": "dashboard", "owner_id": "alice"}, attrs)},
	"action": {"name": action, "context": {}},
}

alice_rw := user("alice", ["viewers"], ["userdata.read", "userdata.write"])

alice_ro := user("alice", ["viewers"], ["userdata.read"])

bob := user("bob", ["viewers"], ["userdata.read", "userdata.write"])

admin := user("root", ["admins"], ["userdata.admin"])

decision(inp) := [a, r] if {
	a := access.allow with input as inp
	r := access.reason with input as inp
}

test_owner_reads_own_data if decision(req(alice_ro, "read", {})) == [true, "user accessing own data"]

test_owner_writes_own_data if decision(req(alice_rw, "write", {})) == [true, "user modifying own data"]

test_owner_deletes_own_data if decision(req(alice_rw, "delete", {})) == [true, "user deleting own data"]

test_owner_shares_own_data if decision(req(alice_rw, "share", {})) == [true, "owner can share resource"]

test_owner_with_read_scope_cannot_write if decision(req(alice_ro, "write", {})) == [false, "missing userdata.write scope for requesting client"]

test_owner_with_read_scope_cannot_share if decision(req(alice_ro, "share", {})) == [false, "missing userdata.write scope for requesting client"]

test_owner_without_scope_denied if decision(req(user("alice", [], []), "read", {})) == [false, "missing userdata scope for requesting client"]

test_other_user_denied if decision(req(bob, "read", {})) == [false, "not resource owner"]

test_other_user_cannot_write if decision(req(bob, "write", {})) == [false, "not resource owner"]

test_shared_with_user_reads if decision(req(bob, "read", {"shared_with": ["bob"]})) == [true, "resource shared with user"]

test_shared_with_user_cannot_write if decision(req(bob, "write", {"shared_with": ["bob"]})) == [false, "shared resources are read-only"]

test_shared_with_user_cannot_delete if decision(req(bob, "delete", {"shared_with": ["bob"]})) == [false, "shared resources are read-only"]

test_shared_with_group_reads if decision(req(bob, "read", {"shared_with_groups": ["viewers"]})) == [true, "resource shared with user"]

test_shared_with_other_group_denied if decision(req(bob, "read", {"shared_with_groups": ["editors"]})) == [false, "not resource owner"]

test_sharee_needs_scope if decision(req(user("bob", ["viewers"], []), "read", {"shared_with": ["bob"]})) == [false, "missing userdata scope for requesting client"]

test_null_sharing_lists_are_safe if decision(req(bob, "read", {"shared_with": null, "shared_with_groups": null})) == [false, "not resource owner"]

test_public_dashboard_readable if decision(req(bob, "read", {"visibility": "public"})) == [true, "public dashboard readable"]

test_public_dashboard_not_writable if decision(req(bob, "write", {"visibility": "public"})) == [false, "public dashboards are read-only"]

test_public_profile_is_not_a_dashboard if decision(req(bob, "read", {"resource_type": "profile", "visibility": "public"})) == [false, "not resource owner"]

test_owner_reading_public_dashboard_gets_owner_reason if decision(req(alice_ro, "read", {"visibility": "public", "shared_with": ["alice"]})) == [true, "user accessing own data"]

test_sharee_reading_public_dashboard_gets_share_reason if decision(req(bob, "read", {"visibility": "public", "shared_with": ["bob"]})) == [true, "resource shared with user"]

test_admin_override_read if decision(req(admin, "read", {})) == [true, "admin override"]

test_admin_override_write if decision(req(admin, "write", {})) == [true, "admin override"]

test_admin_override_delete if decision(req(admin, "delete", {})) == [true, "admin override"]

test_admin_cannot_share_others_data if decision(req(admin, "share", {})) == [false, "not resource owner"]

test_admin_without_admin_scope_denied if decision(req(user("root", ["admins"], ["userdata.read"]), "read", {})) == [false, "not resource owner"]

test_admin_scope_without_admin_group_denied if decision(req(user("eve", ["managers"], ["userdata.admin"]), "read", {})) == [false, "not resource owner"]

test_admin_owner_gets_owner_reason if decision(req(user("alice", ["admins"], ["userdata.admin"]), "write", {})) == [true, "user modifying own data"]

test_service_reads_with_read_scope if decision(req(service(["userdata.read"]), "read", {})) == [true, "service access granted"]

test_service_read_scope_cannot_write if decision(req(service(["userdata.read"]), "write", {})) == [false, "insufficient service scope"]

test_service_writes_with_write_scope if decision(req(service(["userdata.write"]), "write", {})) == [true, "service access granted"]

test_service_write_scope_cannot_read if decision(req(service(["userdata.write"]), "read", {})) == [false, "insufficient service scope"]

test_service_write_scope_cannot_delete if decision(req(service(["userdata.write"]), "delete", {})) == [false, "insufficient service scope"]

test_service_admin_deletes if decision(req(service(["userdata.admin"]), "delete", {})) == [true, "service access granted"]

test_service_never_shares if decision(req(service(["userdata.admin"]), "share", {})) == [false, "services cannot share user data"]

test_service_id_matching_owner_is_not_owner if decision(req({"id": "alice", "type": "service", "scopes": []}, "read", {})) == [false, "insufficient service scope"]

test_anonymous_denied if decision(req(null, "read", {"visibility": "public"})) == [false, "anonymous access denied"]

test_unknown_action if decision(req(alice_rw, "publish", {})) == [false, "unsupported action"]

test_wrong_resource_type if decision({"subject": alice_rw, "resource": {"type": "dataset", "id": "x", "attributes": {"owner_id": "alice"}}, "action": {"name": "read"}}) == [false, "resource type must be userdata"]
