# Generated from an independent table of the dataset matrix (every role x level x action x
# client scope); each test names its cell. The spec's matrix (part 4A, rule 3): open datasets
# are read by every role and read/written by admins; internal: viewers read*, editors and
# managers read/write*, admins read/write; restricted: admins read/write*. An asterisk means
# the client holds dataset.query or dataset.admin; cells without one need no client scope.
package rec.dataset.access_test

import data.rec.dataset.access

user(groups, scopes) := {"id": "u-1", "type": "user", "groups": groups, "scopes": scopes, "claims": {}}

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "claims": {}}

req(subject, level, action) := {
	"subject": subject,
	"resource": {"type": "dataset", "id": "ds-1", "attributes": {"access_level": level}},
	"action": {"name": action, "context": {}},
}

test_open_read_anonymous_none_allowed if {
	inp := req(null, "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_viewers_none_allowed if {
	inp := req(user(["viewers"], []), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_viewers_query_allowed if {
	inp := req(user(["viewers"], ["dataset.query"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_viewers_admin_allowed if {
	inp := req(user(["viewers"], ["dataset.admin"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_editors_none_allowed if {
	inp := req(user(["editors"], []), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_editors_query_allowed if {
	inp := req(user(["editors"], ["dataset.query"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_editors_admin_allowed if {
	inp := req(user(["editors"], ["dataset.admin"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_managers_none_allowed if {
	inp := req(user(["managers"], []), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_managers_query_allowed if {
	inp := req(user(["managers"], ["dataset.query"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_managers_admin_allowed if {
	inp := req(user(["managers"], ["dataset.admin"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_admins_none_allowed if {
	inp := req(user(["admins"], []), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_admins_query_allowed if {
	inp := req(user(["admins"], ["dataset.query"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_admins_admin_allowed if {
	inp := req(user(["admins"], ["dataset.admin"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_service_none_allowed if {
	inp := req(service([]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_service_query_allowed if {
	inp := req(service(["dataset.query"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_read_service_admin_allowed if {
	inp := req(service(["dataset.admin"]), "open", "read")
	access.allow == true with input as inp
	access.reason == "open datasets are publicly readable" with input as inp
}

test_open_write_anonymous_none_denied if {
	inp := req(null, "open", "write")
	access.allow == false with input as inp
	access.reason == "anonymous access is limited to reading open datasets" with input as inp
}

test_open_write_viewers_none_denied if {
	inp := req(user(["viewers"], []), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_write_viewers_query_denied if {
	inp := req(user(["viewers"], ["dataset.query"]), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_write_viewers_admin_denied if {
	inp := req(user(["viewers"], ["dataset.admin"]), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_write_editors_none_denied if {
	inp := req(user(["editors"], []), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_write_editors_query_denied if {
	inp := req(user(["editors"], ["dataset.query"]), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_write_editors_admin_denied if {
	inp := req(user(["editors"], ["dataset.admin"]), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_write_managers_none_denied if {
	inp := req(user(["managers"], []), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_write_managers_query_denied if {
	inp := req(user(["managers"], ["dataset.query"]), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_write_managers_admin_denied if {
	inp := req(user(["managers"], ["dataset.admin"]), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_write_admins_none_allowed if {
	inp := req(user(["admins"], []), "open", "write")
	access.allow == true with input as inp
	access.reason == "user has admin access" with input as inp
}

test_open_write_admins_query_allowed if {
	inp := req(user(["admins"], ["dataset.query"]), "open", "write")
	access.allow == true with input as inp
	access.reason == "user has admin access" with input as inp
}

test_open_write_admins_admin_allowed if {
	inp := req(user(["admins"], ["dataset.admin"]), "open", "write")
	access.allow == true with input as inp
	access.reason == "user has admin access" with input as inp
}

test_open_write_service_none_denied if {
	inp := req(service([]), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_open_write_service_query_denied if {
	inp := req(service(["dataset.query"]), "open", "write")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_open_write_service_admin_allowed if {
	inp := req(service(["dataset.admin"]), "open", "write")
	access.allow == true with input as inp
	access.reason == "service has dataset.admin scope" with input as inp
}

test_open_admin_anonymous_none_denied if {
	inp := req(null, "open", "admin")
	access.allow == false with input as inp
	access.reason == "anonymous access is limited to reading open datasets" with input as inp
}

test_open_admin_viewers_none_denied if {
	inp := req(user(["viewers"], []), "open", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_open_admin_viewers_query_denied if {
	inp := req(user(["viewers"], ["dataset.query"]), "open", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_open_admin_viewers_admin_denied if {
	inp := req(user(["viewers"], ["dataset.admin"]), "open", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_admin_editors_none_denied if {
	inp := req(user(["editors"], []), "open", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_open_admin_editors_query_denied if {
	inp := req(user(["editors"], ["dataset.query"]), "open", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_open_admin_editors_admin_denied if {
	inp := req(user(["editors"], ["dataset.admin"]), "open", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_admin_managers_none_denied if {
	inp := req(user(["managers"], []), "open", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_open_admin_managers_query_denied if {
	inp := req(user(["managers"], ["dataset.query"]), "open", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_open_admin_managers_admin_denied if {
	inp := req(user(["managers"], ["dataset.admin"]), "open", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_open_admin_admins_none_denied if {
	inp := req(user(["admins"], []), "open", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_open_admin_admins_query_denied if {
	inp := req(user(["admins"], ["dataset.query"]), "open", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_open_admin_admins_admin_allowed if {
	inp := req(user(["admins"], ["dataset.admin"]), "open", "admin")
	access.allow == true with input as inp
	access.reason == "admin action authorized" with input as inp
}

test_open_admin_service_none_denied if {
	inp := req(service([]), "open", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_open_admin_service_query_denied if {
	inp := req(service(["dataset.query"]), "open", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_open_admin_service_admin_allowed if {
	inp := req(service(["dataset.admin"]), "open", "admin")
	access.allow == true with input as inp
	access.reason == "admin action authorized" with input as inp
}

test_internal_read_anonymous_none_denied if {
	inp := req(null, "internal", "read")
	access.allow == false with input as inp
	access.reason == "anonymous access denied for non-open datasets" with input as inp
}

test_internal_read_viewers_none_denied if {
	inp := req(user(["viewers"], []), "internal", "read")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_read_viewers_query_allowed if {
	inp := req(user(["viewers"], ["dataset.query"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "user has viewer access and client has dataset.query scope" with input as inp
}

test_internal_read_viewers_admin_allowed if {
	inp := req(user(["viewers"], ["dataset.admin"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "user has viewer access and client has dataset.admin scope" with input as inp
}

test_internal_read_editors_none_denied if {
	inp := req(user(["editors"], []), "internal", "read")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_read_editors_query_allowed if {
	inp := req(user(["editors"], ["dataset.query"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "user has viewer access and client has dataset.query scope" with input as inp
}

test_internal_read_editors_admin_allowed if {
	inp := req(user(["editors"], ["dataset.admin"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "user has viewer access and client has dataset.admin scope" with input as inp
}

test_internal_read_managers_none_denied if {
	inp := req(user(["managers"], []), "internal", "read")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_read_managers_query_allowed if {
	inp := req(user(["managers"], ["dataset.query"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "user has viewer access and client has dataset.query scope" with input as inp
}

test_internal_read_managers_admin_allowed if {
	inp := req(user(["managers"], ["dataset.admin"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "user has viewer access and client has dataset.admin scope" with input as inp
}

test_internal_read_admins_none_allowed if {
	inp := req(user(["admins"], []), "internal", "read")
	access.allow == true with input as inp
	access.reason == "user has admin access" with input as inp
}

test_internal_read_admins_query_allowed if {
	inp := req(user(["admins"], ["dataset.query"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "user has viewer access and client has dataset.query scope" with input as inp
}

test_internal_read_admins_admin_allowed if {
	inp := req(user(["admins"], ["dataset.admin"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "user has viewer access and client has dataset.admin scope" with input as inp
}

test_internal_read_service_none_denied if {
	inp := req(service([]), "internal", "read")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_internal_read_service_query_allowed if {
	inp := req(service(["dataset.query"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "service has dataset.query scope" with input as inp
}

test_internal_read_service_admin_allowed if {
	inp := req(service(["dataset.admin"]), "internal", "read")
	access.allow == true with input as inp
	access.reason == "service has dataset.admin scope" with input as inp
}

test_internal_write_anonymous_none_denied if {
	inp := req(null, "internal", "write")
	access.allow == false with input as inp
	access.reason == "anonymous access denied for non-open datasets" with input as inp
}

test_internal_write_viewers_none_denied if {
	inp := req(user(["viewers"], []), "internal", "write")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_write_viewers_query_denied if {
	inp := req(user(["viewers"], ["dataset.query"]), "internal", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_internal_write_viewers_admin_denied if {
	inp := req(user(["viewers"], ["dataset.admin"]), "internal", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_internal_write_editors_none_denied if {
	inp := req(user(["editors"], []), "internal", "write")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_write_editors_query_allowed if {
	inp := req(user(["editors"], ["dataset.query"]), "internal", "write")
	access.allow == true with input as inp
	access.reason == "user has editor access and client has dataset.query scope" with input as inp
}

test_internal_write_editors_admin_allowed if {
	inp := req(user(["editors"], ["dataset.admin"]), "internal", "write")
	access.allow == true with input as inp
	access.reason == "user has editor access and client has dataset.admin scope" with input as inp
}

test_internal_write_managers_none_denied if {
	inp := req(user(["managers"], []), "internal", "write")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_write_managers_query_allowed if {
	inp := req(user(["managers"], ["dataset.query"]), "internal", "write")
	access.allow == true with input as inp
	access.reason == "user has editor access and client has dataset.query scope" with input as inp
}

test_internal_write_managers_admin_allowed if {
	inp := req(user(["managers"], ["dataset.admin"]), "internal", "write")
	access.allow == true with input as inp
	access.reason == "user has editor access and client has dataset.admin scope" with input as inp
}

test_internal_write_admins_none_allowed if {
	inp := req(user(["admins"], []), "internal", "write")
	access.allow == true with input as inp
	access.reason == "user has admin access" with input as inp
}

test_internal_write_admins_query_allowed if {
	inp := req(user(["admins"], ["dataset.query"]), "internal", "write")
	access.allow == true with input as inp
	access.reason == "user has editor access and client has dataset.query scope" with input as inp
}

test_internal_write_admins_admin_allowed if {
	inp := req(user(["admins"], ["dataset.admin"]), "internal", "write")
	access.allow == true with input as inp
	access.reason == "user has editor access and client has dataset.admin scope" with input as inp
}

test_internal_write_service_none_denied if {
	inp := req(service([]), "internal", "write")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_internal_write_service_query_denied if {
	inp := req(service(["dataset.query"]), "internal", "write")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_internal_write_service_admin_allowed if {
	inp := req(service(["dataset.admin"]), "internal", "write")
	access.allow == true with input as inp
	access.reason == "service has dataset.admin scope" with input as inp
}

test_internal_admin_anonymous_none_denied if {
	inp := req(null, "internal", "admin")
	access.allow == false with input as inp
	access.reason == "anonymous access denied for non-open datasets" with input as inp
}

test_internal_admin_viewers_none_denied if {
	inp := req(user(["viewers"], []), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_admin_viewers_query_denied if {
	inp := req(user(["viewers"], ["dataset.query"]), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_internal_admin_viewers_admin_denied if {
	inp := req(user(["viewers"], ["dataset.admin"]), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_internal_admin_editors_none_denied if {
	inp := req(user(["editors"], []), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_admin_editors_query_denied if {
	inp := req(user(["editors"], ["dataset.query"]), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_internal_admin_editors_admin_denied if {
	inp := req(user(["editors"], ["dataset.admin"]), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_internal_admin_managers_none_denied if {
	inp := req(user(["managers"], []), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_admin_managers_query_denied if {
	inp := req(user(["managers"], ["dataset.query"]), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_internal_admin_managers_admin_denied if {
	inp := req(user(["managers"], ["dataset.admin"]), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_internal_admin_admins_none_denied if {
	inp := req(user(["admins"], []), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_internal_admin_admins_query_denied if {
	inp := req(user(["admins"], ["dataset.query"]), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_internal_admin_admins_admin_allowed if {
	inp := req(user(["admins"], ["dataset.admin"]), "internal", "admin")
	access.allow == true with input as inp
	access.reason == "admin action authorized" with input as inp
}

test_internal_admin_service_none_denied if {
	inp := req(service([]), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_internal_admin_service_query_denied if {
	inp := req(service(["dataset.query"]), "internal", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_internal_admin_service_admin_allowed if {
	inp := req(service(["dataset.admin"]), "internal", "admin")
	access.allow == true with input as inp
	access.reason == "admin action authorized" with input as inp
}

test_restricted_read_anonymous_none_denied if {
	inp := req(null, "restricted", "read")
	access.allow == false with input as inp
	access.reason == "anonymous access denied for non-open datasets" with input as inp
}

test_restricted_read_viewers_none_denied if {
	inp := req(user(["viewers"], []), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_read_viewers_query_denied if {
	inp := req(user(["viewers"], ["dataset.query"]), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_read_viewers_admin_denied if {
	inp := req(user(["viewers"], ["dataset.admin"]), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_read_editors_none_denied if {
	inp := req(user(["editors"], []), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_read_editors_query_denied if {
	inp := req(user(["editors"], ["dataset.query"]), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_read_editors_admin_denied if {
	inp := req(user(["editors"], ["dataset.admin"]), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_read_managers_none_denied if {
	inp := req(user(["managers"], []), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_read_managers_query_denied if {
	inp := req(user(["managers"], ["dataset.query"]), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_read_managers_admin_denied if {
	inp := req(user(["managers"], ["dataset.admin"]), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_read_admins_none_denied if {
	inp := req(user(["admins"], []), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_read_admins_query_allowed if {
	inp := req(user(["admins"], ["dataset.query"]), "restricted", "read")
	access.allow == true with input as inp
	access.reason == "user has admin access and client has dataset.query scope" with input as inp
}

test_restricted_read_admins_admin_allowed if {
	inp := req(user(["admins"], ["dataset.admin"]), "restricted", "read")
	access.allow == true with input as inp
	access.reason == "user has admin access and client has dataset.admin scope" with input as inp
}

test_restricted_read_service_none_denied if {
	inp := req(service([]), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_restricted_read_service_query_denied if {
	inp := req(service(["dataset.query"]), "restricted", "read")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_restricted_read_service_admin_allowed if {
	inp := req(service(["dataset.admin"]), "restricted", "read")
	access.allow == true with input as inp
	access.reason == "service has dataset.admin scope for restricted access" with input as inp
}

test_restricted_write_anonymous_none_denied if {
	inp := req(null, "restricted", "write")
	access.allow == false with input as inp
	access.reason == "anonymous access denied for non-open datasets" with input as inp
}

test_restricted_write_viewers_none_denied if {
	inp := req(user(["viewers"], []), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_write_viewers_query_denied if {
	inp := req(user(["viewers"], ["dataset.query"]), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_write_viewers_admin_denied if {
	inp := req(user(["viewers"], ["dataset.admin"]), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_write_editors_none_denied if {
	inp := req(user(["editors"], []), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_write_editors_query_denied if {
	inp := req(user(["editors"], ["dataset.query"]), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_write_editors_admin_denied if {
	inp := req(user(["editors"], ["dataset.admin"]), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_write_managers_none_denied if {
	inp := req(user(["managers"], []), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_write_managers_query_denied if {
	inp := req(user(["managers"], ["dataset.query"]), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_write_managers_admin_denied if {
	inp := req(user(["managers"], ["dataset.admin"]), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_write_admins_none_denied if {
	inp := req(user(["admins"], []), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_write_admins_query_allowed if {
	inp := req(user(["admins"], ["dataset.query"]), "restricted", "write")
	access.allow == true with input as inp
	access.reason == "user has admin access and client has dataset.query scope" with input as inp
}

test_restricted_write_admins_admin_allowed if {
	inp := req(user(["admins"], ["dataset.admin"]), "restricted", "write")
	access.allow == true with input as inp
	access.reason == "user has admin access and client has dataset.admin scope" with input as inp
}

test_restricted_write_service_none_denied if {
	inp := req(service([]), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_restricted_write_service_query_denied if {
	inp := req(service(["dataset.query"]), "restricted", "write")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_restricted_write_service_admin_allowed if {
	inp := req(service(["dataset.admin"]), "restricted", "write")
	access.allow == true with input as inp
	access.reason == "service has dataset.admin scope for restricted access" with input as inp
}

test_restricted_admin_anonymous_none_denied if {
	inp := req(null, "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "anonymous access denied for non-open datasets" with input as inp
}

test_restricted_admin_viewers_none_denied if {
	inp := req(user(["viewers"], []), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_admin_viewers_query_denied if {
	inp := req(user(["viewers"], ["dataset.query"]), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_restricted_admin_viewers_admin_denied if {
	inp := req(user(["viewers"], ["dataset.admin"]), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_admin_editors_none_denied if {
	inp := req(user(["editors"], []), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_admin_editors_query_denied if {
	inp := req(user(["editors"], ["dataset.query"]), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_restricted_admin_editors_admin_denied if {
	inp := req(user(["editors"], ["dataset.admin"]), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_admin_managers_none_denied if {
	inp := req(user(["managers"], []), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_admin_managers_query_denied if {
	inp := req(user(["managers"], ["dataset.query"]), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_restricted_admin_managers_admin_denied if {
	inp := req(user(["managers"], ["dataset.admin"]), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_restricted_admin_admins_none_denied if {
	inp := req(user(["admins"], []), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset scope for requesting client" with input as inp
}

test_restricted_admin_admins_query_denied if {
	inp := req(user(["admins"], ["dataset.query"]), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "missing dataset.admin scope for admin" with input as inp
}

test_restricted_admin_admins_admin_allowed if {
	inp := req(user(["admins"], ["dataset.admin"]), "restricted", "admin")
	access.allow == true with input as inp
	access.reason == "admin action authorized" with input as inp
}

test_restricted_admin_service_none_denied if {
	inp := req(service([]), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_restricted_admin_service_query_denied if {
	inp := req(service(["dataset.query"]), "restricted", "admin")
	access.allow == false with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

test_restricted_admin_service_admin_allowed if {
	inp := req(service(["dataset.admin"]), "restricted", "admin")
	access.allow == true with input as inp
	access.reason == "admin action authorized" with input as inp
}

test_missing_subject_is_anonymous if {
	inp := {"resource": {"type": "dataset", "id": "ds", "attributes": {"access_level": "internal"}}, "action": {"name": "read"}}
	not access.allow with input as inp
	access.reason == "anonymous access denied for non-open datasets" with input as inp
}

test_unknown_level_denied if {
	inp := req(user(["admins"], ["dataset.admin"]), "secret", "read")
	not access.allow with input as inp
	access.reason == "unknown access level" with input as inp
}

test_missing_level_denied if {
	inp := {"subject": user(["admins"], ["dataset.admin"]), "resource": {"type": "dataset", "id": "ds"}, "action": {"name": "read"}}
	not access.allow with input as inp
	access.reason == "unknown access level" with input as inp
}

test_unknown_action_denied if {
	inp := req(user(["admins"], ["dataset.admin"]), "open", "delete")
	not access.allow with input as inp
	access.reason == "unsupported action" with input as inp
}

test_user_without_group_denied_with_scope if {
	inp := req(user([], ["dataset.query"]), "internal", "read")
	not access.allow with input as inp
	access.reason == "insufficient group privileges" with input as inp
}

test_unknown_subject_type_denied if {
	inp := req({"id": "x", "type": "robot", "scopes": ["dataset.admin"]}, "internal", "read")
	not access.allow with input as inp
	access.reason == "unknown subject type" with input as inp
}

test_service_groups_are_ignored if {
	inp := req({"id": "svc", "type": "service", "groups": ["admins"], "scopes": []}, "internal", "read")
	not access.allow with input as inp
	access.reason == "insufficient scope privileges" with input as inp
}

# A client holding both dataset scopes (the CLI) is named by the reference's scope for the cell.
test_both_scopes_internal_read_names_query if {
	inp := req(user(["viewers"], ["dataset.admin", "dataset.query"]), "internal", "read")
	access.reason == "user has viewer access and client has dataset.query scope" with input as inp
}

test_both_scopes_internal_write_names_admin if {
	inp := req(user(["editors"], ["dataset.admin", "dataset.query"]), "internal", "write")
	access.reason == "user has editor access and client has dataset.admin scope" with input as inp
}

test_both_scopes_restricted_read_names_admin if {
	inp := req(user(["admins"], ["dataset.admin", "dataset.query"]), "restricted", "read")
	access.reason == "user has admin access and client has dataset.admin scope" with input as inp
}

test_user_without_group_cannot_write_open_data if {
	inp := req(user([], []), "open", "write")
	not access.allow with input as inp
	access.reason == "insufficient group privileges" with input as inp
}
