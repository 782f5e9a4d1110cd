# METADATA
# title: Dataset row filters
# description: |
#   Row-level filters for a dataset the subject may read. Access is checked first with the
#   dataset access policy (action read): a denied subject gets allow=false, no filters and
#   the access policy's reason. Otherwise:
#   - organization filter: a subject that belongs to organizations only sees rows of those
#     organizations (`eq` for one, `in` for several);
#   - classification filter (internal datasets only): rows whose classification is in the
#     set allowed both by the subject's group and by the client's scope, omitted when
#     everything is allowed.
#   Filters are {field, operator, value} with operator eq, ne, in, gt or lt.
package rec.dataset.row_filter

import data.rec.common.subject
import data.rec.dataset.access

default allow := false

read_action := {"name": "read", "context": {}}

allow if access.allow with input.action as read_action

reason := r if {
	not allow
	r := access.reason with input.action as read_action
}

reason := sprintf("read access granted; %d row filter(s) apply", [count(filters)]) if allow

# Set iteration is sorted, so the list order is stable (by field name).
filters := [f | some f in filter_set] if allow
else := []

all_classifications := {"public", "internal", "confidential"}

filter_set contains {"field": "organization_id", "operator": "eq", "value": org} if {
	count(subject.organizations) == 1
	some org in subject.organizations
}

filter_set contains {"field": "organization_id", "operator": "in", "value": sort(subject.organizations)} if {
	count(subject.organizations) > 1
}

filter_set contains {"field": "classification", "operator": "in", "value": sort(allowed_classifications)} if {
	input.resource.attributes.access_level == "internal"
	allowed_classifications != all_classifications
}

allowed_classifications := by_group & by_scope

by_group := all_classifications if subject.has_group_level(subject.level_manager)
else := {"public", "internal"} if subject.has_group_level(subject.level_editor)
else := all_classifications if subject.is_service
else := {"public"}

by_scope := all_classifications if subject.has_scope("dataset.admin")
else := {"public", "internal"} if subject.has_scope("dataset.query")
else := {"public"}
