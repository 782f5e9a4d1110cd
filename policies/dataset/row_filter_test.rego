package rec.dataset.row_filter_test

import data.rec.dataset.row_filter

user(groups, scopes, orgs) := {"id": "u-1", "type": "user", "groups": groups, "scopes": scopes, "organizations": orgs, "claims": {}}

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "organizations": [], "claims": {}}

req(subject, level) := {
	"subject": subject,
	"resource": {"type": "dataset", "id": "ds-1", "attributes": {"access_level": level}},
	"action": {"name": "filters", "context": {}},
}

classification(values) := {"field": "classification", "operator": "in", "value": values}

test_denied_access_gives_no_filters_and_access_reason if {
	inp := req(null, "internal")
	not row_filter.allow with input as inp
	row_filter.filters == [] with input as inp
	row_filter.reason == "anonymous access denied for non-open datasets" with input as inp
}

test_restricted_denied_for_manager if {
	inp := req(user(["managers"], ["dataset.query"], []), "restricted")
	not row_filter.allow with input as inp
	row_filter.filters == [] with input as inp
	row_filter.reason == "insufficient group privileges" with input as inp
}

test_open_dataset_anonymous_has_no_filters if {
	inp := req(null, "open")
	row_filter.allow with input as inp
	row_filter.filters == [] with input as inp
	row_filter.reason == "read access granted; 0 row filter(s) apply" with input as inp
}

test_internal_viewer_query_sees_public_only if {
	row_filter.filters == [classification(["public"])] with input as req(user(["viewers"], ["dataset.query"], []), "internal")
}

test_internal_editor_query_sees_internal_and_public if {
	row_filter.filters == [classification(["internal", "public"])] with input as req(user(["editors"], ["dataset.query"], []), "internal")
}

test_internal_editor_admin_scope_still_capped_by_group if {
	row_filter.filters == [classification(["internal", "public"])] with input as req(user(["editors"], ["dataset.admin"], []), "internal")
}

test_internal_manager_query_capped_by_scope if {
	row_filter.filters == [classification(["internal", "public"])] with input as req(user(["managers"], ["dataset.query"], []), "internal")
}

test_internal_manager_admin_scope_has_no_classification_filter if {
	row_filter.filters == [] with input as req(user(["managers"], ["dataset.admin"], []), "internal")
}

test_internal_admin_without_scope_sees_public_only if {
	inp := req(user(["admins"], [], []), "internal")
	row_filter.allow with input as inp
	row_filter.filters == [classification(["public"])] with input as inp
}

test_internal_service_query if {
	row_filter.filters == [classification(["internal", "public"])] with input as req(service(["dataset.query"]), "internal")
}

test_internal_service_admin_has_no_filter if {
	row_filter.filters == [] with input as req(service(["dataset.admin"]), "internal")
}

test_restricted_admin_gets_no_classification_filter if {
	row_filter.filters == [] with input as req(user(["admins"], ["dataset.admin"], []), "restricted")
}

test_single_organization_filter_eq if {
	row_filter.filters == [{"field": "organization_id", "operator": "eq", "value": "dso-north"}] with input as req(user(["viewers"], [], [{"alias": "dso-north", "type": ["dso"]}]), "open")
}

test_several_organizations_filter_in_sorted if {
	orgs := [{"alias": "rec-b"}, {"alias": "rec-a"}]
	row_filter.filters == [{"field": "organization_id", "operator": "in", "value": ["rec-a", "rec-b"]}] with input as req(user(["viewers"], [], orgs), "open")
}

test_classification_sorts_before_organization if {
	inp := req(user(["editors"], ["dataset.query"], ["rec-a"]), "internal")
	row_filter.filters == [
		classification(["internal", "public"]),
		{"field": "organization_id", "operator": "eq", "value": "rec-a"},
	] with input as inp
}

test_raw_keycloak_claim_list_form if {
	subj := {"id": "u", "type": "user", "groups": ["viewers"], "scopes": [], "claims": {"organization": ["rec-x"]}}
	row_filter.filters == [{"field": "organization_id", "operator": "eq", "value": "rec-x"}] with input as req(subj, "open")
}

test_raw_keycloak_claim_object_form if {
	subj := {"id": "u", "type": "user", "groups": ["viewers"], "scopes": [], "claims": {"organization": {"rec-y": {"id": "42"}}}}
	row_filter.filters == [{"field": "organization_id", "operator": "eq", "value": "rec-y"}] with input as req(subj, "open")
}

test_reason_counts_filters if {
	row_filter.reason == "read access granted; 1 row filter(s) apply" with input as req(user(["viewers"], ["dataset.query"], []), "internal")
}
