/**
 * Request and response bodies of the participant web gateway (spec 001 part C, sections 2 and
 * 4). Every field of the spec's tables is here under the spec's name; fields beyond them are
 * documented where they are declared. The flexibility routes answer the flexibility service's own
 * bodies (`@rec/flexibility-service/Domain`), so the two contracts cannot drift apart.
 */
import { Contract } from "@rec/platform"
import { Domain as Nudging } from "@rec/nudging-service"
import * as Schema from "effect/Schema"

/** A timestamp on the wire: ISO 8601 in UTC. */
export const Timestamp = Schema.String.annotations({
  description: "ISO 8601 date-time in UTC",
  examples: ["2026-05-03T08:15:00.000Z"],
  jsonSchema: { type: "string", format: "date-time" }
})

const BooleanFromQuery = Schema.Literal("true", "false", "1", "0").pipe(
  Schema.transform(Schema.Boolean, {
    strict: true,
    decode: (s) => s === "true" || s === "1",
    encode: (b) => (b ? "true" : "false")
  })
).annotations({ description: "true or false (1 or 0)" })

const IntParam = (name: string, min: number, max: number) =>
  Schema.NumberFromString.pipe(
    Schema.int({ message: () => `${name} must be a whole number` }),
    Schema.between(min, max, { message: () => `${name} must be from ${min} to ${max}` })
  )

// ---------------------------------------------------------------------------------------------
// Profile

export const Profile = Schema.Struct({
  sub: Schema.String.annotations({ description: "The user's id at the identity provider (`sub` of the token)" }),
  email: Schema.String.annotations({ description: "From the token; empty when the token carries none" }),
  name: Schema.String.annotations({
    description: "From the token (`name`, else `preferred_username`); empty when it carries neither"
  }),
  groups: Schema.Array(Schema.String).annotations({
    description: "The identity provider's groups of the user (the token's `groups` claim without the leading `/`), sorted"
  }),
  terms_accepted: Schema.Boolean.annotations({
    description: "The user accepted the current version of the terms of use (`terms_version`)"
  }),
  terms_version: Schema.String.annotations({ description: "The version of the terms the user must accept (TERMS_VERSION)" }),
  terms_accepted_at: Schema.NullOr(Timestamp).annotations({ description: "When the current version was accepted" })
}).annotations({ identifier: "Profile" })
export type Profile = typeof Profile.Type

// ---------------------------------------------------------------------------------------------
// Overview

export const Period = Schema.String.pipe(
  Schema.pattern(/^(19[7-9]\d|[2-9]\d{3})-(0[1-9]|1[0-2])$/, { message: () => "must be a month as YYYY-MM, e.g. 2026-03" })
).annotations({ description: "A calendar month, YYYY-MM (1970 or later)", examples: ["2026-03"] })

export const OverviewParams = Schema.Struct({
  period: Schema.optionalWith(Period, { exact: true }).annotations({
    description: "The month (default: the current month in OVERVIEW_TIME_ZONE); a later month is a 400"
  })
}).annotations({ identifier: "OverviewParams" })

export const Overview = Schema.Struct({
  community_id: Schema.String.annotations({ description: "The user's community (its key in the digital twin)" }),
  community_name: Schema.String,
  period: Period,
  production_kwh: Schema.Number.annotations({
    description: "Energy the user's meter measured as produced in the period, kWh (3 decimals)"
  }),
  consumption_kwh: Schema.Number.annotations({
    description: "Energy the user's meter measured as consumed in the period, kWh (3 decimals)"
  }),
  shared_kwh: Schema.Number.annotations({
    description: "The user's part of the energy shared in the community in the period: the sum of the digital " +
      "twin's `virtual_consumption_kwh` of the user's meter (each 15 minutes the community's shared energy, " +
      "min(total exported, total imported), is allocated to the members in proportion to their import), kWh (3 decimals)"
  }),
  incentive_eur: Schema.Number.annotations({
    description: "shared_kwh x incentive_tariff_eur_per_kwh, rounded to the cent"
  }),
  incentive_tariff_eur_per_kwh: Schema.Number.annotations({
    description: "The community's incentive tariff (INCENTIVE_TARIFFS, else INCENTIVE_TARIFF_EUR_PER_KWH, default 0.11)"
  }),
  device_id: Schema.NullOr(Schema.String).annotations({
    description: "The meter the figures come from; null when the user has none (then every figure is 0)"
  }),
  from: Timestamp.annotations({ description: "Start of the period: midnight of its first day in `time_zone`" }),
  to: Timestamp.annotations({
    description: "End of the figures: the end of the period or, for the current month, of the last quarter hour that ended"
  }),
  time_zone: Schema.String.annotations({ description: "The zone months are counted in (OVERVIEW_TIME_ZONE)" })
}).annotations({ identifier: "Overview" })
export type Overview = typeof Overview.Type

// ---------------------------------------------------------------------------------------------
// Notifications

export const maxNotificationPage = Nudging.maxPageSize

export const NotificationListParams = Contract.allErrors(Schema.Struct({
  limit: Schema.optionalWith(IntParam("limit", 1, maxNotificationPage), { default: () => 20, exact: true }).annotations({
    description: `Page size, 1 to ${maxNotificationPage} (default 20)`
  }),
  offset: Schema.optionalWith(IntParam("offset", 0, 1_000_000), { default: () => 0, exact: true }).annotations({
    description: "Notifications to skip (default 0)"
  }),
  unread: Schema.optionalWith(BooleanFromQuery, { default: () => false, exact: true }).annotations({
    description: "true: only the notifications not read yet"
  })
}).annotations({ identifier: "NotificationListParams" }))

export const Notification = Schema.Struct({
  id: Nudging.NotificationId,
  title: Schema.String,
  body: Schema.String,
  severity: Nudging.Severity,
  kind: Schema.String.annotations({ description: "Kind of notification (what the user can turn off in the nudging preferences)" }),
  family: Schema.String,
  type: Nudging.RuleType,
  url: Schema.String.annotations({ description: "Where the app should take the user (relative to the app)" }),
  community_id: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  read_at: Schema.NullOr(Timestamp),
  clicked_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Notification", description: "A notification the user received" })
export type Notification = typeof Notification.Type

export const NotificationPage = Schema.Struct({
  items: Schema.Array(Notification).annotations({ description: "Newest first; deleted ones never" }),
  total: Schema.Int.annotations({ description: "Notifications matching the filter, over all pages" }),
  limit: Schema.Int,
  offset: Schema.Int
}).annotations({ identifier: "NotificationPage" })
export type NotificationPage = typeof NotificationPage.Type

export const NotificationPath = Schema.Struct({ id: Nudging.NotificationId })

// ---------------------------------------------------------------------------------------------
// Settings

export const maxPerDayLimit = Nudging.maxPerDayLimit

export const Language = Nudging.Language.pipe(Schema.maxLength(35)).annotations({
  description: "Language tag such as \"it\" or \"en-GB\" (notifications are written in it)",
  examples: ["it"]
})

export const SettingsRequest = Contract.allErrors(Schema.Struct({
  notifications_enabled: Schema.Boolean.annotations({ description: "false: no notification is delivered" }),
  preferred_language: Language,
  max_per_day: Schema.Int.pipe(
    Schema.between(1, maxPerDayLimit, { message: () => `must be a whole number from 1 to ${maxPerDayLimit}` })
  ).annotations({ description: `Most notifications delivered per day, 1 to ${maxPerDayLimit}` })
}).annotations({ identifier: "SettingsRequest" }))
export type SettingsRequest = typeof SettingsRequest.Type

export const NotificationPreferences = Schema.Struct({
  community_id: Schema.NullOr(Schema.String).annotations({
    description: "The community the preferences apply to (null: the user has no community)"
  }),
  enabled: Schema.Boolean,
  language: Schema.String,
  max_per_day: Schema.Int,
  disabled_kinds: Schema.Array(Schema.String).annotations({ description: "Kinds of notification the user turned off" }),
  email_enabled: Schema.Boolean,
  email: Schema.NullOr(Schema.String),
  stored: Schema.Boolean.annotations({ description: "false: the nudging service's defaults, nothing stored yet" }),
  updated_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "NotificationPreferences", description: "The nudging service's preferences of the user" })
export type NotificationPreferences = typeof NotificationPreferences.Type

export const PushStatus = Schema.Struct({
  subscribed: Schema.Boolean.annotations({ description: "At least one browser of the user receives web push notifications" }),
  subscriptions: Schema.Int.annotations({ description: "Browsers (push subscriptions) registered through this gateway" }),
  last_subscribed_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "PushStatus" })
export type PushStatus = typeof PushStatus.Type

export const Settings = Schema.Struct({
  notifications_enabled: Schema.Boolean,
  preferred_language: Schema.String,
  max_per_day: Schema.Int,
  stored: Schema.Boolean.annotations({
    description: "false: the user never saved settings; the three fields above are then the nudging service's preferences"
  }),
  updated_at: Schema.NullOr(Timestamp),
  notification_preferences: NotificationPreferences,
  push: PushStatus
}).annotations({ identifier: "Settings" })
export type Settings = typeof Settings.Type

export const VapidPublicKey = Nudging.VapidPublicKey

/** The browser's `PushSubscription.toJSON()`. */
export const PushSubscribeRequest = Contract.allErrors(Nudging.PushSubscriptionBody.annotations({
  identifier: "PushSubscribeRequest",
  description: "The browser's PushSubscription as JSON (`subscription.toJSON()`)"
}))
export type PushSubscribeRequest = typeof PushSubscribeRequest.Type

export const PushSubscribed = Schema.Struct({
  subscription: Schema.Struct({
    id: Schema.String,
    endpoint_origin: Schema.String.annotations({ description: "Origin of the push service (the full URL is not shown)" }),
    enabled: Schema.Boolean,
    created_at: Timestamp
  }),
  push: PushStatus
}).annotations({ identifier: "PushSubscribed" })
export type PushSubscribed = typeof PushSubscribed.Type

export const PushUnsubscribeRequest = Contract.allErrors(Schema.Struct({
  endpoint: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048)), { exact: true }).annotations({
    description: "The subscription to remove (the browser's endpoint); omitted: every subscription of the user"
  })
}).annotations({ identifier: "PushUnsubscribeRequest" }))
export type PushUnsubscribeRequest = typeof PushUnsubscribeRequest.Type

export const PushUnsubscribed = Schema.Struct({
  removed: Schema.Int.annotations({ description: "Subscriptions removed by this call" }),
  push: PushStatus
}).annotations({ identifier: "PushUnsubscribed" })
export type PushUnsubscribed = typeof PushUnsubscribed.Type

// ---------------------------------------------------------------------------------------------
// Points

export const Points = Schema.Struct({
  total_points: Schema.Int.annotations({ description: "Points earned: the sum of `reward_points_actual` of settled commitments" }),
  settled_commitments: Schema.Int,
  pending_points_estimated: Schema.Int.annotations({
    description: "Points estimated for the commitments not settled yet (`reward_points_estimated` of committed ones)"
  }),
  open_commitments: Schema.Int.annotations({ description: "Commitments committed and not yet settled or cancelled" })
}).annotations({ identifier: "Points" })
export type Points = typeof Points.Type
