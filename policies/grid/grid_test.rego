# The grid gateway's policy cell by cell: operators of two DSOs (the dev identities
# dso-operator on dso-alto-garda and dso-operator-valsugana on dso-valsugana, as their tokens
# make them), a member of both, users without a DSO, and services by scope.
package rec.grid.access_test

import data.rec.common.dev_identities_test as dev
import data.rec.grid.access

alto := dev.users["dso-operator"]["rec-cli"]

valsugana := dev.users["dso-operator-valsugana"]["rec-frontend"]

multi := dev.users["dso-multi"]["rec-cli"]

participant := dev.users.participant["rec-cli"]

# An administrator of the platform, holding every scope through rec-cli: still no network.
admin := dev.users.admin["rec-cli"]

svc_grid := dev.services["svc-grid"]

svc_no_scopes := dev.services["svc-no-scopes"]

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "organizations": [], "claims": {}}

network_req(subject, action, network) := {
	"subject": subject,
	"resource": {"type": "grid", "id": network, "attributes": {"network_id": network}},
	"action": {"name": action, "context": {}},
}

alerts_req(subject, action) := {
	"subject": subject,
	"resource": {"type": "grid", "id": "alerts", "attributes": {}},
	"action": {"name": action, "context": {}},
}

decision(inp) := [a, r] if {
	a := access.allow with input as inp
	r := access.reason with input as inp
}

own := "user accessing own network data"

mismatch := "network_id mismatch: user does not belong to the requested DSO"

managing := "user managing own alert rules"

service_granted := "service access granted"

# --- read: a DSO's operators read their network only

test_alto_reads_alto if decision(network_req(alto, "read", "dso-alto-garda")) == [true, own]

test_alto_cannot_read_valsugana if decision(network_req(alto, "read", "dso-valsugana")) == [false, mismatch]

test_valsugana_reads_valsugana if decision(network_req(valsugana, "read", "dso-valsugana")) == [true, own]

test_valsugana_cannot_read_alto if decision(network_req(valsugana, "read", "dso-alto-garda")) == [false, mismatch]

test_nobody_reads_an_unowned_network if {
	decision(network_req(alto, "read", "dso-val-di-non")) == [false, mismatch]
	decision(network_req(valsugana, "read", "dso-val-di-non")) == [false, mismatch]
}

test_member_of_two_dsos_reads_both if {
	decision(network_req(multi, "read", "dso-alto-garda")) == [true, own]
	decision(network_req(multi, "read", "dso-valsugana")) == [true, own]
	decision(network_req(multi, "read", "dso-val-di-non")) == [false, mismatch]
}

test_non_dso_organization_is_no_network if decision(network_req(participant, "read", "it-energy-community")) == [false, mismatch]

test_user_scopes_do_not_widen_reads if {
	# rec-cli grants grid.admin to every user token; membership still decides.
	"grid.admin" in admin.scopes
	decision(network_req(admin, "read", "dso-alto-garda")) == [false, mismatch]
	decision(network_req(alto, "read", "dso-valsugana")) == [false, mismatch]
}

test_dso_found_through_attribute_type if {
	member := {
		"id": "u-9",
		"type": "user",
		"groups": [],
		"scopes": [],
		"organizations": [{"alias": "dso-x", "types": [], "attributes": {"type": ["dso"]}, "groups": [], "roles": []}],
		"claims": {},
	}
	decision(network_req(member, "read", "dso-x")) == [true, own]
}

test_dso_type_is_case_sensitive if {
	member := {
		"id": "u-9",
		"type": "user",
		"groups": [],
		"scopes": [],
		"organizations": [{"alias": "dso-x", "types": ["DSO"], "attributes": {}, "groups": [], "roles": []}],
		"claims": {},
	}
	decision(network_req(member, "read", "dso-x")) == [false, mismatch]
}

test_read_without_a_network_is_denied if decision(alerts_req(alto, "read")) == [false, mismatch]

# --- read: services by scope, any network

test_svc_grid_reads_any_network if {
	decision(network_req(svc_grid, "read", "dso-alto-garda")) == [true, service_granted]
	decision(network_req(svc_grid, "read", "dso-val-di-non")) == [true, service_granted]
}

test_service_with_grid_read_reads if decision(network_req(service(["grid.read"]), "read", "dso-valsugana")) == [true, service_granted]

test_service_without_grid_scope_is_denied if {
	decision(network_req(svc_no_scopes, "read", "dso-alto-garda")) == [false, "service missing grid.read scope"]
	decision(network_req(service(["dt.read"]), "read", "dso-alto-garda")) == [false, "service missing grid.read scope"]
}

# --- alerts.read: any user (own rows only, enforced by the gateway)

test_users_read_their_alert_rules if {
	decision(alerts_req(alto, "alerts.read")) == [true, managing]
	decision(alerts_req(valsugana, "alerts.read")) == [true, managing]
	decision(alerts_req(participant, "alerts.read")) == [true, managing]
}

# --- alerts.write: DSO members, for their networks

test_alto_writes_rules_of_alto if decision(network_req(alto, "alerts.write", "dso-alto-garda")) == [true, managing]

test_alto_cannot_write_rules_of_valsugana if {
	decision(network_req(alto, "alerts.write", "dso-valsugana")) == [
		false,
		"network_id mismatch: user does not belong to the DSO of this network",
	]
}

test_valsugana_writes_rules_of_valsugana if decision(network_req(valsugana, "alerts.write", "dso-valsugana")) == [true, managing]

test_member_of_two_writes_rules_of_both if {
	decision(network_req(multi, "alerts.write", "dso-alto-garda")) == [true, managing]
	decision(network_req(multi, "alerts.write", "dso-valsugana")) == [true, managing]
}

test_settings_need_any_dso if {
	decision(alerts_req(alto, "alerts.write")) == [true, managing]
	decision(alerts_req(multi, "alerts.write")) == [true, managing]
	decision(alerts_req(participant, "alerts.write")) == [false, "missing DSO organization membership"]
	decision(network_req(participant, "alerts.write", "dso-alto-garda")) == [false, "missing DSO organization membership"]
}

test_empty_network_counts_as_none if {
	inp := {
		"subject": participant,
		"resource": {"type": "grid", "id": "alerts", "attributes": {"network_id": ""}},
		"action": {"name": "alerts.write", "context": {}},
	}
	decision(inp) == [false, "missing DSO organization membership"]
}

# --- alert endpoints for services: grid.admin only

test_svc_grid_manages_alerts if {
	decision(alerts_req(svc_grid, "alerts.read")) == [true, service_granted]
	decision(network_req(svc_grid, "alerts.write", "dso-alto-garda")) == [true, service_granted]
}

test_grid_read_is_not_enough_for_alerts if {
	decision(alerts_req(service(["grid.read"]), "alerts.read")) == [false, "service missing grid.admin scope"]
	decision(alerts_req(svc_no_scopes, "alerts.write")) == [false, "service missing grid.admin scope"]
}

# --- fail closed

test_unknown_action_is_denied_even_for_grid_admin if {
	decision(network_req(svc_grid, "delete", "dso-alto-garda")) == [false, "access denied"]
	decision(network_req(alto, "admin", "dso-alto-garda")) == [false, "access denied"]
}

test_other_resource_types_are_denied if {
	inp := {
		"subject": alto,
		"resource": {"type": "dataset", "id": "dso-alto-garda", "attributes": {"network_id": "dso-alto-garda"}},
		"action": {"name": "read", "context": {}},
	}
	decision(inp) == [false, "access denied"]
}

test_anonymous_is_denied if {
	decision(network_req(null, "read", "dso-alto-garda")) == [false, "anonymous access denied"]
	decision(alerts_req(null, "alerts.read")) == [false, "anonymous access denied"]
}

test_missing_subject_is_denied if {
	inp := {"resource": {"type": "grid", "id": "dso-alto-garda", "attributes": {"network_id": "dso-alto-garda"}}, "action": {"name": "read"}}
	decision(inp) == [false, "anonymous access denied"]
}
