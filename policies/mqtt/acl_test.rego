package rec.mqtt.acl_test

import data.rec.common.dev_identities_test as dev
import data.rec.mqtt.acl

user(groups, scopes) := {"id": "u-1", "type": "user", "groups": groups, "scopes": scopes, "claims": {}}

service(scopes) := {"id": "svc-1", "type": "service", "groups": [], "scopes": scopes, "claims": {}}

req(subject, action, topic) := {
	"subject": subject,
	"resource": {"type": "topic", "id": topic, "attributes": {"clientid": "c-1"}},
	"action": {"name": action, "context": {}},
}

decision(inp) := [a, r] if {
	a := acl.allow with input as inp
	r := acl.reason with input as inp
}

viewer := user(["viewers"], [])

admin := user(["admins"], [])

readings := "rec/telemetry/meter/m-1/readings"

# --- the shipped ACL data (policies/data.json)

test_viewer_subscribes_to_readings if decision(req(viewer, "subscribe", readings)) == [true, "authorized"]

test_viewer_reads_readings if decision(req(viewer, "read", readings)) == [true, "authorized"]

test_viewer_cannot_publish_readings if decision(req(viewer, "publish", readings)) == [false, "no ACL rule matched or capability missing"]

test_manager_subscribes_to_readings if decision(req(user(["managers"], []), "subscribe", readings)) == [true, "authorized"]

test_viewer_cannot_subscribe_to_everything if decision(req(viewer, "subscribe", "#")) == [false, "no ACL rule matched or capability missing"]

test_viewer_subscribes_with_the_rule_filter_itself if decision(req(viewer, "subscribe", "rec/telemetry/+/+/readings")) == [true, "authorized"]

test_viewer_cannot_widen_filter_with_hash if decision(req(viewer, "subscribe", "rec/telemetry/#")) == [false, "no ACL rule matched or capability missing"]

test_viewer_cannot_widen_last_level if decision(req(viewer, "subscribe", "rec/telemetry/meter/m-1/+")) == [false, "no ACL rule matched or capability missing"]

test_plus_spans_exactly_one_level if decision(req(viewer, "subscribe", "rec/telemetry/meter/a/b/readings")) == [false, "no ACL rule matched or capability missing"]

test_admin_subscribes_to_everything if decision(req(admin, "subscribe", "#")) == [true, "authorized"]

test_admin_publishes_anywhere if decision(req(admin, "publish", "rec/anything/at/all")) == [true, "authorized"]

test_admin_reaches_sys_topics_through_explicit_rule if decision(req(admin, "subscribe", "$SYS/broker/uptime")) == [true, "authorized"]

test_twin_publishes_events if decision(req(service(["dt.write", "mqtt.write"]), "publish", "rec/digital-twin/events/meter/m-1")) == [true, "authorized"]

test_twin_without_mqtt_capability_denied if decision(req(service(["dt.write"]), "publish", "rec/digital-twin/events/meter/m-1")) == [false, "no ACL rule matched or capability missing"]

test_twin_cannot_publish_commands if decision(req(service(["dt.write", "mqtt.write"]), "publish", "rec/digital-twin/commands/x")) == [false, "no ACL rule matched or capability missing"]

test_reader_follows_twin_state if decision(req(service(["dt.read", "mqtt.read"]), "subscribe", "rec/digital-twin/state/asset-9")) == [true, "authorized"]

test_reader_cannot_publish_state if decision(req(service(["dt.read", "mqtt.read"]), "publish", "rec/digital-twin/state/asset-9")) == [false, "no ACL rule matched or capability missing"]

test_hash_includes_its_parent_level if decision(req(service(["dt.read", "mqtt.read"]), "subscribe", "rec/digital-twin")) == [true, "authorized"]

test_pipeline_follower_subscribes_to_runs if decision(req(service(["pipelines.runs.read", "mqtt.read"]), "subscribe", "rec/pipelines/runs/grid")) == [true, "authorized"]

test_pipeline_runs_are_one_level_deep if decision(req(service(["pipelines.runs.read", "mqtt.read"]), "subscribe", "rec/pipelines/runs/grid/extra")) == [false, "no ACL rule matched or capability missing"]

test_services_do_not_read_user_telemetry if decision(req(service(["mqtt.read"]), "subscribe", readings)) == [false, "no ACL rule matched or capability missing"]

test_anonymous_denied if decision(req(null, "subscribe", readings)) == [false, "anonymous subject not allowed"]

test_resource_type_must_be_topic if decision({"subject": admin, "resource": {"type": "dataset", "id": "x"}, "action": {"name": "read"}}) == [false, "resource type must be topic"]

test_unknown_action_has_no_capability if decision(req(viewer, "unknown", readings)) == [false, "no ACL rule matched or capability missing"]

# --- each rule of policies/data.json, reached by the identity it is written for (as
# dev/identities.yaml issues it: policies/common/dev_identities_test.rego) and denied to the
# nearest identity it is not written for

# Users through the default client rec-cli (which holds every platform scope, mqtt.* included).
dev_user(name) := dev.users[name]["rec-cli"]

dev_service(name) := dev.services[name]

# Allowed, and by the rule named (not by another one).
granted(inp, rule) if {
	decision(inp) == [true, "authorized"]
	rule in acl.granted_by with input as inp
}

refused(inp) if {
	decision(inp) == [false, "no ACL rule matched or capability missing"]
	count(acl.granted_by) == 0 with input as inp
}

participant_id := dev.users.participant["rec-cli"].id

test_rule_admins_everything_reached_by_admin if {
	granted(req(dev_user("admin"), "subscribe", "#"), "admins-everything")
	granted(req(dev_user("admin"), "publish", "rec/system/alerts/high"), "admins-everything")
	granted(req(dev_user("admin"), "read", "$SYS/broker/uptime"), "admins-everything")
}

# Managers may publish (a capability of their group), but no rule gives them every topic.
test_rule_admins_everything_denied_to_manager if {
	refused(req(dev_user("manager"), "subscribe", "#"))
	refused(req(dev_user("manager"), "publish", "rec/system/alerts/high"))
}

test_rule_twin_publishes_reached_by_the_twin if {
	granted(req(dev_service("svc-digital-twin"), "publish", "rec/digital-twin/events/meter/m-1"), "twin-publishes")
	granted(req(dev_service("svc-digital-twin"), "publish", "rec/digital-twin/state/asset-9"), "twin-publishes")
}

# The flexibility service holds mqtt.write and dt.read, not dt.write.
test_rule_twin_publishes_denied_to_a_twin_reader_that_publishes_elsewhere if {
	refused(req(dev_service("svc-flexibility"), "publish", "rec/digital-twin/events/meter/m-1"))
}

test_rule_twin_followers_reached_by_the_nudging_service if {
	granted(req(dev_service("svc-nudging"), "subscribe", "rec/digital-twin/#"), "twin-followers")
	granted(req(dev_service("svc-nudging"), "read", "rec/digital-twin/events/meter/m-1"), "twin-followers")
}

# The twin holds dt.read but only publishes (no mqtt.read); the pipelines read MQTT but not the twin.
test_rule_twin_followers_denied_to_the_twin_and_to_the_pipelines if {
	refused(req(dev_service("svc-digital-twin"), "subscribe", "rec/digital-twin/#"))
	refused(req(dev_service("svc-pipelines"), "subscribe", "rec/digital-twin/#"))
}

test_rule_pipelines_publish_runs_reached_by_the_pipelines if {
	granted(req(dev_service("svc-pipelines"), "publish", "rec/pipelines/runs/grid"), "pipelines-publish-runs")
}

# The flexibility service holds mqtt.write and pipelines.runs.read: it follows runs, it cannot forge them.
test_rule_pipelines_publish_runs_denied_to_a_run_follower if {
	refused(req(dev_service("svc-flexibility"), "publish", "rec/pipelines/runs/grid"))
}

test_rule_pipeline_run_followers_reached_by_grid_and_flexibility if {
	granted(req(dev_service("svc-grid"), "subscribe", "rec/pipelines/runs/+"), "pipeline-run-followers")
	granted(req(dev_service("svc-grid"), "read", "rec/pipelines/runs/grid"), "pipeline-run-followers")
	granted(req(dev_service("svc-flexibility"), "subscribe", "rec/pipelines/runs/+"), "pipeline-run-followers")
}

test_rule_pipeline_run_followers_reached_through_a_shared_subscription if {
	granted(req(dev_service("svc-grid"), "subscribe", "$share/grid-gateway/rec/pipelines/runs/+"), "pipeline-run-followers")
	granted(req(dev_service("svc-grid"), "read", "$share/grid-gateway/rec/pipelines/runs/+"), "pipeline-run-followers")
}

# The nudging service reads MQTT without pipelines.runs.read; a user of the CLI client holds
# both scopes but is not a service.
test_rule_pipeline_run_followers_denied_to_other_readers if {
	refused(req(dev_service("svc-nudging"), "subscribe", "rec/pipelines/runs/+"))
	refused(req(dev_user("viewer"), "subscribe", "rec/pipelines/runs/+"))
}

test_rule_telemetry_readers_reached_by_a_viewer if {
	granted(req(dev_user("viewer"), "subscribe", "rec/telemetry/+/+/readings"), "telemetry-readers")
	granted(req(dev.users.viewer["rec-frontend"], "read", readings), "telemetry-readers")
}

# A user without a group whose client holds mqtt.read.
test_rule_telemetry_readers_denied_to_a_user_without_group if {
	refused(req(dev_user("nogroup"), "subscribe", "rec/telemetry/+/+/readings"))
}

test_rule_flexibility_publishes_commitments_reached_by_the_flexibility_service if {
	granted(
		req(dev_service("svc-flexibility"), "publish", concat("/", ["rec/flexibility/committed", participant_id])),
		"flexibility-publishes-commitments",
	)
}

# The pipelines hold mqtt.write and follow commitments; they cannot announce one.
test_rule_flexibility_publishes_commitments_denied_to_a_commitment_follower if {
	refused(req(dev_service("svc-pipelines"), "publish", concat("/", ["rec/flexibility/committed", participant_id])))
}

test_rule_commitment_followers_reached_by_the_pipelines if {
	granted(req(dev_service("svc-pipelines"), "subscribe", "rec/flexibility/committed/+"), "commitment-followers")
}

# The flexibility service reads MQTT and publishes commitments, but does not hold flexibility.committed.read.
test_rule_commitment_followers_denied_to_the_publisher if {
	refused(req(dev_service("svc-flexibility"), "subscribe", "rec/flexibility/committed/+"))
	refused(req(dev_service("svc-grid"), "subscribe", "rec/flexibility/committed/+"))
}

test_rule_registry_publishes_updates_reached_by_the_registry if {
	granted(req(dev_service("svc-rec-registry"), "publish", "rec/registry/updates/community/it-energy-community"), "registry-publishes-updates")
}

# The pipelines hold dataset.admin and mqtt.write: what the first version of the rule required.
test_rule_registry_publishes_updates_denied_to_the_pipelines if {
	refused(req(dev_service("svc-pipelines"), "publish", "rec/registry/updates/community/it-energy-community"))
}

test_rule_registry_update_followers_reached_by_services if {
	granted(req(dev_service("svc-grid"), "subscribe", "rec/registry/updates/#"), "registry-update-followers")
	granted(req(dev_service("svc-nudging"), "read", "rec/registry/updates/community/it-energy-community"), "registry-update-followers")
}

# The registry itself publishes without reading; users are not services, whatever their client holds.
test_rule_registry_update_followers_denied_to_the_registry_and_to_users if {
	refused(req(dev_service("svc-rec-registry"), "subscribe", "rec/registry/updates/#"))
	refused(req(dev_user("manager"), "subscribe", "rec/registry/updates/#"))
}

# --- shared subscriptions

test_shared_subscription_is_no_wider_than_its_filter if {
	refused(req(dev_service("svc-grid"), "subscribe", "$share/g/rec/pipelines/#"))
}

# The group is the whole level after $share: an empty or wildcard group is no shared
# subscription, and `$share/rec/...` is group `rec` with the filter `pipelines/runs/+`.
test_shared_subscription_group_is_one_plain_level if {
	refused(req(dev_service("svc-grid"), "subscribe", "$share//rec/pipelines/runs/+"))
	refused(req(dev_service("svc-grid"), "subscribe", "$share/+/rec/pipelines/runs/+"))
	refused(req(dev_service("svc-grid"), "subscribe", "$share/rec/pipelines/runs/+"))
}

# Publishing is never to a shared-subscription name, not even for administrators.
test_publishing_to_a_share_name_is_not_unwrapped if {
	refused(req(dev_user("admin"), "publish", "$share/g/rec/pipelines/runs/grid"))
}

# --- matching semantics on fixture data

fixture := {
	"capabilities": {"groups": {"viewers": ["subscribe", "read"]}, "scopes": {"mqtt.write": ["publish"], "mqtt.read": ["subscribe"]}},
	"rules": [
		{"subjects": {"types": ["user"]}, "topics": ["x/a+b", "x/?", "x/[ab]", "y/+/z"], "actions": ["subscribe"]},
		{"subjects": {"scopes": ["sensors.*"]}, "topics": ["s/#"], "actions": ["publish"]},
		{"subjects": {"ids": ["u-7"]}, "topics": ["personal/u-7/#"], "actions": "*"},
		{"topics": "*", "actions": ["read"]},
	],
}

# The ACL package lives below data.rec.mqtt too: replacing all of data.rec.mqtt would replace
# the rules under test with the fixture. Only the two data documents are replaced.
fixture_decision(inp) := d if {
	d := decision(inp) with data.rec.mqtt.capabilities as fixture.capabilities
		with data.rec.mqtt.rules as fixture.rules
}

test_plus_inside_a_level_is_literal if fixture_decision(req(viewer, "subscribe", "x/aXb")) == [false, "no ACL rule matched or capability missing"]

test_plus_inside_a_level_matches_itself if fixture_decision(req(viewer, "subscribe", "x/a+b")) == [true, "authorized"]

test_glob_question_mark_is_literal if fixture_decision(req(viewer, "subscribe", "x/a")) == [false, "no ACL rule matched or capability missing"]

test_glob_class_is_literal if fixture_decision(req(viewer, "subscribe", "x/b")) == [false, "no ACL rule matched or capability missing"]

test_plus_matches_one_level if fixture_decision(req(viewer, "subscribe", "y/anything/z")) == [true, "authorized"]

test_plus_does_not_match_empty_level_count if fixture_decision(req(viewer, "subscribe", "y/z")) == [false, "no ACL rule matched or capability missing"]

test_scope_prefix_pattern if fixture_decision(req(service(["sensors.temperature", "mqtt.write"]), "publish", "s/t/1")) == [true, "authorized"]

test_scope_prefix_needs_the_dot if fixture_decision(req(service(["sensorsX", "mqtt.write"]), "publish", "s/t/1")) == [false, "no ACL rule matched or capability missing"]

test_id_rule if fixture_decision(req({"id": "u-7", "type": "user", "groups": ["viewers"], "scopes": []}, "subscribe", "personal/u-7/inbox")) == [true, "authorized"]

test_id_rule_other_user if fixture_decision(req(viewer, "subscribe", "personal/u-7/inbox")) == [false, "no ACL rule matched or capability missing"]

test_rule_without_subjects_applies_to_all if fixture_decision(req(viewer, "read", "any/topic")) == [true, "authorized"]

test_wildcard_first_level_never_matches_dollar_topics if fixture_decision(req(viewer, "subscribe", "$SYS/x")) == [false, "no ACL rule matched or capability missing"]

test_deny_rules_are_reported_as_data_errors if {
	bad := object.union(fixture, {"rules": array.concat(fixture.rules, [{"topics": ["#"], "effect": "deny"}])})
	[allowed, reason] := decision(req(viewer, "read", "any/topic")) with data.rec.mqtt.capabilities as bad.capabilities
		with data.rec.mqtt.rules as bad.rules
	allowed == false
	reason == "ACL data has rules with an unsupported effect at [4]"
}

test_explicit_allow_effect_is_fine if {
	ok := object.union(fixture, {"rules": [{"topics": ["t"], "actions": ["read"], "effect": "allow"}]})
	decision(req(viewer, "read", "t")) == [true, "authorized"] with data.rec.mqtt.capabilities as ok.capabilities
		with data.rec.mqtt.rules as ok.rules
}

# --- superuser

test_admins_are_superusers if acl.superuser with input as req(admin, "superuser", "")

test_mqtt_admin_scope_is_superuser if acl.superuser with input as req(service(["mqtt.admin"]), "superuser", "")

test_viewer_is_not_superuser if not acl.superuser with input as req(viewer, "superuser", "")

test_user_with_mqtt_admin_client_scope_is_not_superuser if {
	not acl.superuser with input as req(user(["viewers"], ["mqtt.admin"]), "superuser", "")
}

test_anonymous_is_not_superuser if not acl.superuser with input as req(null, "superuser", "")
