# METADATA
# title: Subject helpers
# description: |
#   Classifies the policy input's subject (anonymous, user, service account) and answers
#   group-level and scope questions for every other package. The input subject is
#   {id, type, groups, scopes, organizations, claims} as built by @rec/auth, or null.
package rec.common.subject

# A missing or null subject, or one typed "anonymous", is anonymous.
is_anonymous if not input.subject

is_anonymous if input.subject == null

is_anonymous if input.subject.type == "anonymous"

is_user if {
	not is_anonymous
	input.subject.type == "user"
}

is_service if {
	not is_anonymous
	input.subject.type == "service"
}

id := input.subject.id if not is_anonymous

# Service accounts never carry groups: their rights come from scopes alone.
groups := {g | some g in input.subject.groups} if is_user
else := set()

scopes := {s | some s in input.subject.scopes} if not is_anonymous
else := set()

has_scope(s) if s in scopes

has_any_scope(wanted) if {
	some s in wanted
	s in scopes
}

in_group(g) if g in groups

level_admin := 4

level_manager := 3

level_editor := 2

level_viewer := 1

# The highest group held decides; higher levels include the rights of the lower ones.
group_level := level_admin if "admins" in groups
else := level_manager if "managers" in groups
else := level_editor if "editors" in groups
else := level_viewer if "viewers" in groups
else := 0

has_group_level(n) if {
	is_user
	group_level >= n
}

# Organization aliases of the subject: the normalised `organizations` list built by @rec/auth
# (objects with an `alias`, or plain strings), else the raw Keycloak `organization` claim in its
# list form (aliases) or object form (alias -> details).
organizations contains alias if {
	not is_anonymous
	some o in input.subject.organizations
	alias := o.alias
	is_string(alias)
}

organizations contains alias if {
	not is_anonymous
	some alias in input.subject.organizations
	is_string(alias)
}

organizations contains alias if {
	not is_anonymous
	not input.subject.organizations
	some alias in input.subject.claims.organization
	is_string(alias)
}

organizations contains alias if {
	not is_anonymous
	not input.subject.organizations
	is_object(input.subject.claims.organization)
	some alias, _ in input.subject.claims.organization
}
