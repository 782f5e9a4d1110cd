# Generated from an independent table: every dt action for each group level and client scope,
# services by scope, and event emission.
package rec.dt.access_test

import data.rec.dt.access

user(groups, scopes) := {"id": "u-1", "type": "user", "groups": groups, "scopes": scopes, "claims": {}}

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "claims": {}}

req(subject, action) := {"subject": subject, "resource": {"type": "dt", "id": "dt-1", "attributes": {}}, "action": {"name": action, "context": {}}}

event(subject, event_type, state) := {
	"subject": subject,
	"resource": {"type": "dt", "id": "dt-1", "attributes": {}},
	"action": {"name": "emit_event", "context": {"event_type": event_type, "simulation_state": state}},
}

test_user_viewers_noscope_read_denied if {
	inp := req(user(["viewers"], []), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_read_read_allowed if {
	inp := req(user(["viewers"], ["dt.read"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_viewers_dt_write_read_allowed if {
	inp := req(user(["viewers"], ["dt.write"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_viewers_dt_simulate_read_denied if {
	inp := req(user(["viewers"], ["dt.simulate"]), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_admin_read_allowed if {
	inp := req(user(["viewers"], ["dt.admin"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_editors_noscope_read_denied if {
	inp := req(user(["editors"], []), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_read_read_allowed if {
	inp := req(user(["editors"], ["dt.read"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_editors_dt_write_read_allowed if {
	inp := req(user(["editors"], ["dt.write"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_editors_dt_simulate_read_denied if {
	inp := req(user(["editors"], ["dt.simulate"]), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_admin_read_allowed if {
	inp := req(user(["editors"], ["dt.admin"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_managers_noscope_read_denied if {
	inp := req(user(["managers"], []), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_read_read_allowed if {
	inp := req(user(["managers"], ["dt.read"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_managers_dt_write_read_allowed if {
	inp := req(user(["managers"], ["dt.write"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_managers_dt_simulate_read_denied if {
	inp := req(user(["managers"], ["dt.simulate"]), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_admin_read_allowed if {
	inp := req(user(["managers"], ["dt.admin"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_admins_noscope_read_denied if {
	inp := req(user(["admins"], []), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_read_read_allowed if {
	inp := req(user(["admins"], ["dt.read"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_admins_dt_write_read_allowed if {
	inp := req(user(["admins"], ["dt.write"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_admins_dt_simulate_read_denied if {
	inp := req(user(["admins"], ["dt.simulate"]), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_admin_read_allowed if {
	inp := req(user(["admins"], ["dt.admin"]), "read")
	access.allow == true with input as inp
	access.reason == "user can read dt data" with input as inp
}

test_user_none_noscope_read_denied if {
	inp := req(user([], []), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_read_read_denied if {
	inp := req(user([], ["dt.read"]), "read")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_none_dt_write_read_denied if {
	inp := req(user([], ["dt.write"]), "read")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_none_dt_simulate_read_denied if {
	inp := req(user([], ["dt.simulate"]), "read")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_admin_read_denied if {
	inp := req(user([], ["dt.admin"]), "read")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_noscope_read_denied if {
	inp := req(service([]), "read")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_read_read_allowed if {
	inp := req(service(["dt.read"]), "read")
	access.allow == true with input as inp
	access.reason == "service has dt read scope" with input as inp
}

test_service_dt_write_read_allowed if {
	inp := req(service(["dt.write"]), "read")
	access.allow == true with input as inp
	access.reason == "service has dt read scope" with input as inp
}

test_service_dt_simulate_read_denied if {
	inp := req(service(["dt.simulate"]), "read")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_admin_read_allowed if {
	inp := req(service(["dt.admin"]), "read")
	access.allow == true with input as inp
	access.reason == "service has dt read scope" with input as inp
}

test_anonymous_read_denied if {
	inp := req(null, "read")
	not access.allow with input as inp
	access.reason == "anonymous access denied" with input as inp
}

test_user_viewers_noscope_write_denied if {
	inp := req(user(["viewers"], []), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_read_write_denied if {
	inp := req(user(["viewers"], ["dt.read"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_write_write_denied if {
	inp := req(user(["viewers"], ["dt.write"]), "write")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_viewers_dt_simulate_write_denied if {
	inp := req(user(["viewers"], ["dt.simulate"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_admin_write_denied if {
	inp := req(user(["viewers"], ["dt.admin"]), "write")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_editors_noscope_write_denied if {
	inp := req(user(["editors"], []), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_read_write_denied if {
	inp := req(user(["editors"], ["dt.read"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_write_write_allowed if {
	inp := req(user(["editors"], ["dt.write"]), "write")
	access.allow == true with input as inp
	access.reason == "user can write dt data" with input as inp
}

test_user_editors_dt_simulate_write_denied if {
	inp := req(user(["editors"], ["dt.simulate"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_admin_write_allowed if {
	inp := req(user(["editors"], ["dt.admin"]), "write")
	access.allow == true with input as inp
	access.reason == "user can write dt data" with input as inp
}

test_user_managers_noscope_write_denied if {
	inp := req(user(["managers"], []), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_read_write_denied if {
	inp := req(user(["managers"], ["dt.read"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_write_write_allowed if {
	inp := req(user(["managers"], ["dt.write"]), "write")
	access.allow == true with input as inp
	access.reason == "user can write dt data" with input as inp
}

test_user_managers_dt_simulate_write_denied if {
	inp := req(user(["managers"], ["dt.simulate"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_admin_write_allowed if {
	inp := req(user(["managers"], ["dt.admin"]), "write")
	access.allow == true with input as inp
	access.reason == "user can write dt data" with input as inp
}

test_user_admins_noscope_write_denied if {
	inp := req(user(["admins"], []), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_read_write_denied if {
	inp := req(user(["admins"], ["dt.read"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_write_write_allowed if {
	inp := req(user(["admins"], ["dt.write"]), "write")
	access.allow == true with input as inp
	access.reason == "user can write dt data" with input as inp
}

test_user_admins_dt_simulate_write_denied if {
	inp := req(user(["admins"], ["dt.simulate"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_admin_write_allowed if {
	inp := req(user(["admins"], ["dt.admin"]), "write")
	access.allow == true with input as inp
	access.reason == "user can write dt data" with input as inp
}

test_user_none_noscope_write_denied if {
	inp := req(user([], []), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_read_write_denied if {
	inp := req(user([], ["dt.read"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_write_write_denied if {
	inp := req(user([], ["dt.write"]), "write")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_none_dt_simulate_write_denied if {
	inp := req(user([], ["dt.simulate"]), "write")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_admin_write_denied if {
	inp := req(user([], ["dt.admin"]), "write")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_noscope_write_denied if {
	inp := req(service([]), "write")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_read_write_denied if {
	inp := req(service(["dt.read"]), "write")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_write_write_allowed if {
	inp := req(service(["dt.write"]), "write")
	access.allow == true with input as inp
	access.reason == "service has dt write scope" with input as inp
}

test_service_dt_simulate_write_denied if {
	inp := req(service(["dt.simulate"]), "write")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_admin_write_allowed if {
	inp := req(service(["dt.admin"]), "write")
	access.allow == true with input as inp
	access.reason == "service has dt write scope" with input as inp
}

test_anonymous_write_denied if {
	inp := req(null, "write")
	not access.allow with input as inp
	access.reason == "anonymous access denied" with input as inp
}

test_user_viewers_noscope_simulate_denied if {
	inp := req(user(["viewers"], []), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_read_simulate_denied if {
	inp := req(user(["viewers"], ["dt.read"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_write_simulate_denied if {
	inp := req(user(["viewers"], ["dt.write"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_simulate_simulate_denied if {
	inp := req(user(["viewers"], ["dt.simulate"]), "simulate")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_viewers_dt_admin_simulate_denied if {
	inp := req(user(["viewers"], ["dt.admin"]), "simulate")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_editors_noscope_simulate_denied if {
	inp := req(user(["editors"], []), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_read_simulate_denied if {
	inp := req(user(["editors"], ["dt.read"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_write_simulate_denied if {
	inp := req(user(["editors"], ["dt.write"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_simulate_simulate_denied if {
	inp := req(user(["editors"], ["dt.simulate"]), "simulate")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_editors_dt_admin_simulate_denied if {
	inp := req(user(["editors"], ["dt.admin"]), "simulate")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_managers_noscope_simulate_denied if {
	inp := req(user(["managers"], []), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_read_simulate_denied if {
	inp := req(user(["managers"], ["dt.read"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_write_simulate_denied if {
	inp := req(user(["managers"], ["dt.write"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_simulate_simulate_allowed if {
	inp := req(user(["managers"], ["dt.simulate"]), "simulate")
	access.allow == true with input as inp
	access.reason == "user can run simulations" with input as inp
}

test_user_managers_dt_admin_simulate_allowed if {
	inp := req(user(["managers"], ["dt.admin"]), "simulate")
	access.allow == true with input as inp
	access.reason == "user can run simulations" with input as inp
}

test_user_admins_noscope_simulate_denied if {
	inp := req(user(["admins"], []), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_read_simulate_denied if {
	inp := req(user(["admins"], ["dt.read"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_write_simulate_denied if {
	inp := req(user(["admins"], ["dt.write"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_simulate_simulate_allowed if {
	inp := req(user(["admins"], ["dt.simulate"]), "simulate")
	access.allow == true with input as inp
	access.reason == "user can run simulations" with input as inp
}

test_user_admins_dt_admin_simulate_allowed if {
	inp := req(user(["admins"], ["dt.admin"]), "simulate")
	access.allow == true with input as inp
	access.reason == "user can run simulations" with input as inp
}

test_user_none_noscope_simulate_denied if {
	inp := req(user([], []), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_read_simulate_denied if {
	inp := req(user([], ["dt.read"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_write_simulate_denied if {
	inp := req(user([], ["dt.write"]), "simulate")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_simulate_simulate_denied if {
	inp := req(user([], ["dt.simulate"]), "simulate")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_none_dt_admin_simulate_denied if {
	inp := req(user([], ["dt.admin"]), "simulate")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_noscope_simulate_denied if {
	inp := req(service([]), "simulate")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_read_simulate_denied if {
	inp := req(service(["dt.read"]), "simulate")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_write_simulate_denied if {
	inp := req(service(["dt.write"]), "simulate")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_simulate_simulate_allowed if {
	inp := req(service(["dt.simulate"]), "simulate")
	access.allow == true with input as inp
	access.reason == "service has dt simulate scope" with input as inp
}

test_service_dt_admin_simulate_allowed if {
	inp := req(service(["dt.admin"]), "simulate")
	access.allow == true with input as inp
	access.reason == "service has dt simulate scope" with input as inp
}

test_anonymous_simulate_denied if {
	inp := req(null, "simulate")
	not access.allow with input as inp
	access.reason == "anonymous access denied" with input as inp
}

test_user_viewers_noscope_admin_denied if {
	inp := req(user(["viewers"], []), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_read_admin_denied if {
	inp := req(user(["viewers"], ["dt.read"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_write_admin_denied if {
	inp := req(user(["viewers"], ["dt.write"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_simulate_admin_denied if {
	inp := req(user(["viewers"], ["dt.simulate"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_viewers_dt_admin_admin_denied if {
	inp := req(user(["viewers"], ["dt.admin"]), "admin")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_editors_noscope_admin_denied if {
	inp := req(user(["editors"], []), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_read_admin_denied if {
	inp := req(user(["editors"], ["dt.read"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_write_admin_denied if {
	inp := req(user(["editors"], ["dt.write"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_simulate_admin_denied if {
	inp := req(user(["editors"], ["dt.simulate"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_editors_dt_admin_admin_denied if {
	inp := req(user(["editors"], ["dt.admin"]), "admin")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_managers_noscope_admin_denied if {
	inp := req(user(["managers"], []), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_read_admin_denied if {
	inp := req(user(["managers"], ["dt.read"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_write_admin_denied if {
	inp := req(user(["managers"], ["dt.write"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_simulate_admin_denied if {
	inp := req(user(["managers"], ["dt.simulate"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_managers_dt_admin_admin_denied if {
	inp := req(user(["managers"], ["dt.admin"]), "admin")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_user_admins_noscope_admin_denied if {
	inp := req(user(["admins"], []), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_read_admin_denied if {
	inp := req(user(["admins"], ["dt.read"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_write_admin_denied if {
	inp := req(user(["admins"], ["dt.write"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_simulate_admin_denied if {
	inp := req(user(["admins"], ["dt.simulate"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_admins_dt_admin_admin_allowed if {
	inp := req(user(["admins"], ["dt.admin"]), "admin")
	access.allow == true with input as inp
	access.reason == "admin access granted" with input as inp
}

test_user_none_noscope_admin_denied if {
	inp := req(user([], []), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_read_admin_denied if {
	inp := req(user([], ["dt.read"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_write_admin_denied if {
	inp := req(user([], ["dt.write"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_simulate_admin_denied if {
	inp := req(user([], ["dt.simulate"]), "admin")
	access.allow == false with input as inp
	access.reason == "missing dt scope for requesting client" with input as inp
}

test_user_none_dt_admin_admin_denied if {
	inp := req(user([], ["dt.admin"]), "admin")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_noscope_admin_denied if {
	inp := req(service([]), "admin")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_read_admin_denied if {
	inp := req(service(["dt.read"]), "admin")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_write_admin_denied if {
	inp := req(service(["dt.write"]), "admin")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_simulate_admin_denied if {
	inp := req(service(["dt.simulate"]), "admin")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_admin_admin_allowed if {
	inp := req(service(["dt.admin"]), "admin")
	access.allow == true with input as inp
	access.reason == "admin access granted" with input as inp
}

test_anonymous_admin_denied if {
	inp := req(null, "admin")
	not access.allow with input as inp
	access.reason == "anonymous access denied" with input as inp
}

test_service_noscope_emits_state_changed_denied if {
	inp := event(service([]), "state_changed", "running")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_noscope_emits_simulation_denied if {
	inp := event(service([]), "simulation", "running")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_read_emits_state_changed_denied if {
	inp := event(service(["dt.read"]), "state_changed", "running")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_read_emits_simulation_denied if {
	inp := event(service(["dt.read"]), "simulation", "running")
	access.allow == false with input as inp
	access.reason == "insufficient privileges" with input as inp
}

test_service_dt_write_emits_state_changed_allowed if {
	inp := event(service(["dt.write"]), "state_changed", "running")
	access.allow == true with input as inp
	access.reason == "service can emit dt events" with input as inp
}

test_service_dt_write_emits_simulation_denied if {
	inp := event(service(["dt.write"]), "simulation", "running")
	access.allow == false with input as inp
	access.reason == "simulation events need the dt.simulate or dt.admin scope" with input as inp
}

test_service_dt_simulate_emits_state_changed_allowed if {
	inp := event(service(["dt.simulate"]), "state_changed", "running")
	access.allow == true with input as inp
	access.reason == "service can emit dt events" with input as inp
}

test_service_dt_simulate_emits_simulation_allowed if {
	inp := event(service(["dt.simulate"]), "simulation", "running")
	access.allow == true with input as inp
	access.reason == "service can emit dt simulation events" with input as inp
}

test_service_dt_admin_emits_state_changed_allowed if {
	inp := event(service(["dt.admin"]), "state_changed", "running")
	access.allow == true with input as inp
	access.reason == "service can emit dt events" with input as inp
}

test_service_dt_admin_emits_simulation_allowed if {
	inp := event(service(["dt.admin"]), "simulation", "running")
	access.allow == true with input as inp
	access.reason == "service can emit dt simulation events" with input as inp
}

test_users_never_emit_events if {
	inp := event(user(["admins"], ["dt.admin"]), "state_changed", null)
	not access.allow with input as inp
	access.reason == "only services may emit dt events" with input as inp
}

test_anonymous_cannot_emit if {
	inp := event(null, "simulation", "running")
	not access.allow with input as inp
	access.reason == "anonymous access denied" with input as inp
}

test_wrong_resource_type if {
	inp := {"subject": service(["dt.admin"]), "resource": {"type": "dataset", "id": "x"}, "action": {"name": "read"}}
	not access.allow with input as inp
	access.reason == "resource type must be dt" with input as inp
}

test_unknown_action if {
	inp := req(service(["dt.admin"]), "delete")
	not access.allow with input as inp
	access.reason == "unsupported action" with input as inp
}
