# METADATA
# title: Participant web gateway
# description: |
#   The participant web gateway is the backend of the participant web app: it serves people, each
#   acting on their own data (everything it asks the services behind it is about the caller, with
#   the caller's own token, and those services apply their own policies). The input:
#     resource.type                 "participant_gateway.<area>", area one of profile, overview,
#                                   notifications, settings, flexibility, assistant
#     resource.attributes.owner_id  the user whose data is acted on
#     action.name                   read, write
#   - Users read and write their own data; no group or client scope is needed: every member of a
#     community uses the app, whatever else the platform lets them do.
#   - Service accounts are refused: they call the platform's services directly, where their
#     scopes are checked.
#   - Anonymous callers are refused.
package rec.participant_gateway.access

import data.rec.common.subject

default allow := false

default reason := "access denied"

areas := {"profile", "overview", "notifications", "settings", "flexibility", "assistant"}

actions := {"read", "write"}

prefix := "participant_gateway."

area := trim_prefix(input.resource.type, prefix) if startswith(input.resource.type, prefix)

owner := input.resource.attributes.owner_id if is_string(input.resource.attributes.owner_id)

allow if grant

reason := grant

reason := denial if not grant

grant := "user acting on own data" if {
	area in areas
	input.action.name in actions
	subject.is_user
	owner == subject.id
}

# Tried in order, so a caller gets exactly one reason.
denial := "unknown resource type" if {
	not area in areas
} else := "unsupported action" if {
	not input.action.name in actions
} else := "anonymous access denied" if {
	subject.is_anonymous
} else := "service accounts call the platform's services directly, not the participant gateway" if {
	subject.is_service
} else := "users act on their own data only" if {
	subject.is_user
} else := "unknown subject type"
