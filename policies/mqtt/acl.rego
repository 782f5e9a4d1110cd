# METADATA
# title: MQTT topic access control
# description: |
#   Decides publish/subscribe/read on a topic (resource {type: "topic", id: <topic>}).
#   Access needs both:
#   - a capability for the action: a group of the subject or a scope listed for it in
#     data.rec.mqtt.capabilities (groups match exactly, there is no hierarchy here);
#   - an ACL rule in data.rec.mqtt.rules matching the subject, the topic and the action.
#   Rules only grant; a rule with effect "deny" is rejected by the data check below rather
#   than silently ignored. Topic patterns follow MQTT: `+` is exactly one level, a final
#   `#` is the parent level and everything below it; a wildcard in the first level never
#   matches `$`-topics such as `$SYS/...`. A requested topic that is itself a filter
#   (subscriptions) is granted only by a pattern at least as wide at every level; a shared
#   subscription `$share/<group>/<filter>` is decided on its filter.
#   `granted_by` names the rules that grant a request (tests, diagnostics).
package rec.mqtt.acl

import data.rec.common.subject

default allow := false

default superuser := false

default reason := "no matching allow rule"

action := input.action.name

# A shared subscription (`$share/<group>/<filter>`, MQTT 5 §4.8.2) is decided on its filter:
# the group only spreads deliveries among its members, it widens nothing. Brokers differ in
# whether they pass the prefix to the ACL check, so both forms are decided alike.
topic := filter if {
	action in {"subscribe", "read"}
	startswith(input.resource.id, "$share/")
	parts := split(input.resource.id, "/")
	count(parts) > 2
	not regex.match(`^$|[+#]`, parts[1])
	filter := concat("/", array.slice(parts, 2, count(parts)))
} else := input.resource.id

capabilities := data.rec.mqtt.capabilities

rules := data.rec.mqtt.rules

# Data problems must be visible, not silently change the meaning of the ACL.
invalid_rules contains i if {
	some i, rule in rules
	not effect_allows(rule)
}

# A missing or null effect means allow.
effect_allows(rule) if object.get(rule, "effect", "allow") in {"allow", null}

has_capability(act) if {
	some g in subject.groups
	act in capabilities.groups[g]
}

has_capability(act) if {
	some s in subject.scopes
	act in capabilities.scopes[s]
}

field_matches(value, allowed) if allowed == "*"

field_matches(value, allowed) if value in allowed

subjects_match(rule) if not rule.subjects

subjects_match(rule) if {
	c := rule.subjects
	constraint_holds(c, "types", input.subject.type)
	constraint_holds(c, "ids", input.subject.id)
	groups_hold(c)
	scopes_hold(c)
}

constraint_holds(c, key, _) if not c[key]

constraint_holds(c, key, value) if field_matches(value, c[key])

groups_hold(c) if not c.groups

groups_hold(c) if {
	some g in c.groups
	subject.in_group(g)
}

scopes_hold(c) if not c.scopes

scopes_hold(c) if {
	some pattern in c.scopes
	some s in subject.scopes
	scope_matches(pattern, s)
}

scope_matches(pattern, s) if pattern == s

scope_matches(pattern, s) if {
	endswith(pattern, ".*")
	startswith(s, trim_suffix(pattern, "*"))
}

topics_match(rule) if not rule.topics

topics_match(rule) if rule.topics == "*"

topics_match(rule) if {
	some pattern in rule.topics
	topic_matches(pattern, topic)
}

actions_match(rule) if not rule.actions

actions_match(rule) if field_matches(action, rule.actions)

rule_matches(rule) if {
	effect_allows(rule)
	subjects_match(rule)
	topics_match(rule)
	actions_match(rule)
}

topic_matches(pattern, t) if pattern == t

topic_matches(pattern, t) if {
	pattern != t
	p := split(pattern, "/")
	levels := split(t, "/")
	not dollar_guarded(p, levels)
	levels_match(p, levels)
}

dollar_guarded(p, levels) if {
	p[0] in {"+", "#"}
	startswith(levels[0], "$")
}

levels_match(p, levels) if {
	p[count(p) - 1] == "#"
	prefix := array.slice(p, 0, count(p) - 1)
	count(levels) >= count(prefix)
	every i, pl in prefix {
		level_matches(pl, levels[i])
	}
}

levels_match(p, levels) if {
	p[count(p) - 1] != "#"
	count(p) == count(levels)
	every i, pl in p {
		level_matches(pl, levels[i])
	}
}

level_matches(pl, tl) if pl == tl

level_matches("+", tl) if tl != "#"

allow if {
	not subject.is_anonymous
	input.resource.type == "topic"
	count(invalid_rules) == 0
	has_capability(action)
	some rule in rules
	rule_matches(rule)
}

# The ids of the rules that grant the request (rules without an id: their index), for tests
# and for anyone asking why: non-empty exactly when `allow` holds.
granted_by contains object.get(rule, "id", i) if {
	not subject.is_anonymous
	input.resource.type == "topic"
	count(invalid_rules) == 0
	has_capability(action)
	some i, rule in rules
	rule_matches(rule)
}

reason := "authorized" if allow

reason := r if {
	not allow
	r := denial
}

denial := "anonymous subject not allowed" if {
	subject.is_anonymous
} else := "resource type must be topic" if {
	not input.resource.type == "topic"
} else := sprintf("ACL data has rules with an unsupported effect at %v", [sort(invalid_rules)]) if {
	count(invalid_rules) > 0
} else := "no ACL rule matched or capability missing"

superuser if {
	not subject.is_anonymous
	subject.in_group("admins")
}

# For a user, scopes are what the *client* may do (a CLI client holds every scope): the scope
# alone must not make every user of such a client a superuser. Users need the admins group.
superuser if {
	subject.is_service
	subject.has_scope("mqtt.admin")
}

superuser if {
	action == "superuser"
	allow
}
