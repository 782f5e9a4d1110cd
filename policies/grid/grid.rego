# METADATA
# title: Grid operator gateway access
# description: |
#   Who may call which endpoint of the grid operator gateway (services/grid-gateway). The
#   gateway asks with resource {type: "grid", id: <network id, or "alerts">, attributes:
#   {network_id?}} and one of three actions. A user's networks are the aliases of the DSO
#   organizations they belong to (an organization whose type, or attribute type, is "dso").
#
#   | action       | users                                          | services                |
#   | read         | member of the DSO of the network asked for      | grid.read or grid.admin |
#   | alerts.read  | any user (their own rules and settings only)    | grid.admin              |
#   | alerts.write | member of the DSO of the rule's network; with   | grid.admin              |
#   |              | no network named (settings), member of any DSO  |                         |
#
#   A user's scopes never widen anything (a user holding grid.admin is still checked for
#   membership), services never own a network, and anything not granted above is denied:
#   unknown actions, other resource types and anonymous callers.
package rec.grid.access

import data.rec.common.subject

default allow := false

default reason := "access denied"

action := input.action.name

known_actions := {"read", "alerts.read", "alerts.write"}

# The network the request is about, when it names one.
network := n if {
	n := input.resource.attributes.network_id
	is_string(n)
	n != ""
}

names_network if network

# Aliases of the user's DSO organizations (types joins the Keycloak `type` list and the
# `attributes.type` values; both are looked at in case a caller hands the raw form).
dso_networks contains org.alias if {
	subject.is_user
	some org in input.subject.organizations
	is_dso(org)
}

is_dso(org) if "dso" in org.types

is_dso(org) if "dso" in org.attributes.type

owns_network if network in dso_networks

has_dso if count(dso_networks) > 0

grid_scopes := {"grid.read", "grid.admin"}

allow if grant

reason := grant

reason := denial if not grant

grant := "user accessing own network data" if {
	input.resource.type == "grid"
	action == "read"
	subject.is_user
	owns_network
} else := "service access granted" if {
	input.resource.type == "grid"
	action == "read"
	subject.is_service
	subject.has_any_scope(grid_scopes)
} else := "user managing own alert rules" if {
	input.resource.type == "grid"
	action == "alerts.read"
	subject.is_user
} else := "user managing own alert rules" if {
	input.resource.type == "grid"
	action == "alerts.write"
	subject.is_user
	owns_network
} else := "user managing own alert rules" if {
	input.resource.type == "grid"
	action == "alerts.write"
	subject.is_user
	not names_network
	has_dso
} else := "service access granted" if {
	input.resource.type == "grid"
	action in {"alerts.read", "alerts.write"}
	subject.is_service
	subject.has_scope("grid.admin")
}

denial := "access denied" if {
	not input.resource.type == "grid"
} else := "access denied" if {
	not action in known_actions
} else := "anonymous access denied" if {
	subject.is_anonymous
} else := "network_id mismatch: user does not belong to the requested DSO" if {
	subject.is_user
	action == "read"
} else := "missing DSO organization membership" if {
	subject.is_user
	action == "alerts.write"
	not has_dso
} else := "network_id mismatch: user does not belong to the DSO of this network" if {
	subject.is_user
	action == "alerts.write"
} else := "service missing grid.read scope" if {
	subject.is_service
	action == "read"
} else := "service missing grid.admin scope" if {
	subject.is_service
} else := "access denied"
