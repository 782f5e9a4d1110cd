# Every row of the table in access.rego, for hand-made subjects and for the identities the dev
# identity provider issues (policies/common/dev_identities_test.rego).
package rec.registry.access_test

import data.rec.common.dev_identities_test as dev
import data.rec.registry.access

user(groups, scopes) := {"id": "u-1", "type": "user", "groups": groups, "scopes": scopes, "claims": {"sub": "u-1"}}

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "claims": {}}

req(subject, action) := {
	"subject": subject,
	"resource": {"type": "registry", "id": "/user/communities", "attributes": {}},
	"action": {"name": action, "context": {}},
}

decision(inp) := [a, r, f] if {
	a := access.allow with input as inp
	r := access.reason with input as inp
	f := access.filters with input as inp
}

member_filters(id) := [
	{"field": "member.user_id", "operator": "eq", "value": id},
	{"field": "member.status", "operator": "in", "value": ["active", "pending", "suspended"]},
]

# --- read

test_admin_reads_everything if {
	decision(req(user(["admins"], []), "read")) == [true, "admin reads every community", []]
}

test_user_reads_own_communities_whatever_the_client_scopes if {
	decision(req(user([], []), "read")) == [true, "user reads the communities it is a member of", member_filters("u-1")]
	decision(req(user(["viewers"], ["registry.read", "registry.admin"]), "read")) == [
		true,
		"user reads the communities it is a member of",
		member_filters("u-1"),
	]
}

test_manager_is_not_an_admin if {
	decision(req(user(["managers"], []), "read")) == [true, "user reads the communities it is a member of", member_filters("u-1")]
}

test_service_with_read_scope_reads_everything if {
	decision(req(service(["registry.read"]), "read")) == [true, "service has a registry read scope", []]
	decision(req(service(["registry.admin"]), "read")) == [true, "service has a registry read scope", []]
}

test_service_without_registry_scope_is_refused if {
	decision(req(service(["dt.read", "registry.updates.write"]), "read")) == [false, "service needs the registry.read scope", []]
}

test_anonymous_is_refused if {
	decision(req(null, "read")) == [false, "anonymous access denied", []]
	decision({"resource": {"type": "registry", "id": "x", "attributes": {}}, "action": {"name": "read", "context": {}}}) == [
		false,
		"anonymous access denied",
		[],
	]
}

# --- export, validate, import

test_admin_administers if {
	every a in ["export", "validate", "import"] {
		decision(req(user(["admins"], []), a)) == [true, "admin may administer the registry", []]
	}
}

test_service_with_admin_scope_administers if {
	every a in ["export", "validate", "import"] {
		decision(req(service(["registry.admin"]), a)) == [true, "service has the registry.admin scope", []]
	}
}

test_read_scope_does_not_administer if {
	every a in ["export", "validate", "import"] {
		decision(req(service(["registry.read"]), a)) == [false, "service needs the registry.admin scope", []]
	}
}

test_users_other_than_admins_do_not_administer if {
	every groups in [[], ["viewers"], ["editors"], ["managers"]] {
		decision(req(user(groups, ["registry.admin"]), "import")) == [false, "only admins may export, validate or import bundles", []]
	}
}

test_anonymous_does_not_administer if {
	decision(req(null, "export")) == [false, "anonymous access denied", []]
}

# --- anything else fails closed

test_other_resource_types_are_refused if {
	inp := {"subject": user(["admins"], []), "resource": {"type": "dataset", "id": "x", "attributes": {}}, "action": {"name": "read", "context": {}}}
	decision(inp) == [false, "resource type must be registry", []]
}

test_unknown_actions_are_refused if {
	decision(req(user(["admins"], []), "delete")) == [false, "unsupported action", []]
	decision(req(service(["registry.admin"]), "write")) == [false, "unsupported action", []]
}

# --- the dev identities (as dev/identities.yaml issues them)

test_dev_flexibility_service_lists_communities if {
	decision(req(dev.services["svc-flexibility"], "read")) == [true, "service has a registry read scope", []]
	decision(req(dev.services["svc-flexibility"], "import"))[0] == false
}

test_dev_registry_client_reads_nothing_by_itself if {
	decision(req(dev.services["svc-rec-registry"], "read")) == [false, "service needs the registry.read scope", []]
}

test_dev_admin_administers_through_the_cli if {
	decision(req(dev.users.admin["rec-cli"], "import")) == [true, "admin may administer the registry", []]
	decision(req(dev.users.admin["rec-frontend"], "read")) == [true, "admin reads every community", []]
}

test_dev_participant_reads_own_communities_only if {
	p := dev.users.participant["rec-frontend"]
	decision(req(p, "read")) == [true, "user reads the communities it is a member of", member_filters(p.id)]
	decision(req(dev.users.participant["rec-cli"], "import")) == [false, "only admins may export, validate or import bundles", []]
}

test_dev_services_without_registry_scopes_are_refused if {
	every name in ["svc-digital-twin", "svc-nudging", "svc-grid", "svc-no-scopes"] {
		decision(req(dev.services[name], "read"))[0] == false
	}
}
