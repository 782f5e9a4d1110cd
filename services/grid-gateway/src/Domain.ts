/**
 * The grid gateway's records and request/response schemas (spec part B section 2; the field
 * names follow the original gateway, reference grid-gateway.md §3): the caller (`/api/me`),
 * alert rules, notification settings, and the query parameters and answers of the grid routes
 * that are not the digital twin's own (`shapes` as GeoJSON, `filters` as one object).
 */
import { GridSchemas, Values } from "@rec/digital-twin"
import { Contract } from "@rec/platform"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Recipients from "./Recipients.js"

// ---------------------------------------------------------------------------------------------
// The caller

export const MeUser = Schema.Struct({
  sub: Schema.String,
  email: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  preferred_username: Schema.NullOr(Schema.String),
  locale: Schema.NullOr(Schema.String).annotations({
    description: "The token's `locale` claim, else the first language of `Accept-Language`; primary subtag (`it`)"
  }),
  network_id: Schema.String.annotations({
    description: "The distribution network the user operates: the alias of their DSO organization (the first, in " +
      "the token's order, for a member of several)"
  }),
  organization: Schema.String.annotations({ description: "Same as network_id (the original's field)" }),
  network_ids: Schema.Array(Schema.String).annotations({ description: "Every network the user's DSO organizations give" })
}).annotations({ identifier: "MeUser" })

export const MeResponse = Schema.Struct({ user: MeUser }).annotations({ identifier: "MeResponse" })
export type MeResponse = typeof MeResponse.Type

export const LanguageHeaders = Schema.Struct({ "accept-language": Schema.optional(Schema.String) })

// ---------------------------------------------------------------------------------------------
// Alert rules

export const RiskType = Schema.Literal("wind", "heat").annotations({ identifier: "RiskType" })
export type RiskType = typeof RiskType.Type

export const riskTypes: ReadonlyArray<RiskType> = ["wind", "heat"]

export const Threshold = Schema.Literal("WARNING", "ALERT").annotations({
  identifier: "Threshold",
  description: "WARNING fires on WARNING or ALERT segments, ALERT on ALERT segments only"
})
export type Threshold = typeof Threshold.Type

/** Hazards, each once, in the order wind, heat. */
export const RiskTypes = Schema.transform(
  Schema.Array(RiskType).pipe(Schema.minItems(1, { message: () => "must list at least one hazard: wind, heat" })),
  Schema.Array(RiskType),
  { strict: true, decode: (list) => riskTypes.filter((t) => list.includes(t)), encode: (list) => list }
).annotations({ description: "A non-empty subset of wind and heat (duplicates are dropped)" })

export const Email = Schema.String.pipe(
  Schema.filter((s) => Recipients.isEmail(s) || `not an e-mail address: ${JSON.stringify(s)}`)
).annotations({ identifier: "Email", examples: ["control-room@dso.example"] })

/**
 * Recipients as a list or as text separated by commas, semicolons or white space, or null (none);
 * every entry must be an e-mail address. Decoded to the addresses, each once (case-insensitive,
 * first spelling kept), in order. One transformation rather than a union with null, so a bad
 * address is reported once, as itself.
 */
export const RecipientsInput = Schema.transformOrFail(
  Schema.Union(Schema.Null, Schema.String, Schema.Array(Schema.String)),
  Schema.NullOr(Schema.Array(Email)),
  {
    strict: true,
    decode: (input, _options, ast) => {
      if (input === null) return ParseResult.succeed(null)
      const parsed = Recipients.parseStrict(typeof input === "string" ? [input] : input)
      return parsed.invalid.length === 0
        ? ParseResult.succeed(parsed.addresses)
        : ParseResult.fail(
          new ParseResult.Type(
            ast,
            input,
            `not ${parsed.invalid.length === 1 ? "an e-mail address" : "e-mail addresses"}: ${
              parsed.invalid.map((s) => JSON.stringify(s)).join(", ")
            }`
          )
        )
    },
    encode: (addresses) => ParseResult.succeed(addresses)
  }
).annotations({
  identifier: "Recipients",
  description: "E-mail addresses, as a list or as one string separated by commas, semicolons or spaces; null: none",
  examples: [["control-room@dso.example", "duty@dso.example"]]
})

export const AlertRuleId = Schema.UUID.annotations({ identifier: "AlertRuleId" })

export const AlertRule = Schema.Struct({
  id: AlertRuleId,
  user_id: Schema.String.annotations({ description: "The owner: the token's subject" }),
  network_id: GridSchemas.NetworkId,
  risk_types: Schema.NonEmptyArray(RiskType),
  threshold: Threshold,
  recipients: Schema.NullOr(Schema.Array(Schema.String)).annotations({
    description: "E-mail addresses for this rule; null: the owner's notification settings decide"
  }),
  active: Schema.Boolean,
  created_at: Schema.String.annotations({ description: "ISO 8601, UTC" }),
  updated_at: Schema.String.annotations({ description: "ISO 8601, UTC" })
}).annotations({ identifier: "AlertRule" })
export type AlertRule = typeof AlertRule.Type

export const AlertRuleCreate = Contract.allErrors(Schema.Struct({
  risk_types: RiskTypes,
  threshold: Threshold,
  recipients: Schema.optionalWith(RecipientsInput, { exact: true }),
  active: Schema.optional(Schema.Boolean).annotations({ description: "Default true" }),
  network_id: Schema.optional(GridSchemas.NetworkId).annotations({
    description: "The network the rule watches; default: the caller's DSO network (required for a member of several DSOs)"
  })
})).annotations({ identifier: "AlertRuleCreate" })
export type AlertRuleCreate = typeof AlertRuleCreate.Type

/**
 * Only the fields present change. `null` clears `recipients`; for the other fields, which cannot
 * be empty, `null` is refused with 422 (leave the field out to keep it).
 */
export const AlertRuleUpdate = Contract.allErrors(Schema.Struct({
  risk_types: Schema.optional(Schema.NullOr(RiskTypes)),
  threshold: Schema.optional(Schema.NullOr(Threshold)),
  recipients: Schema.optionalWith(RecipientsInput, { exact: true }),
  active: Schema.optional(Schema.NullOr(Schema.Boolean))
})).annotations({ identifier: "AlertRuleUpdate" })
export type AlertRuleUpdate = typeof AlertRuleUpdate.Type

export const AlertRulePath = Schema.Struct({ id: AlertRuleId })

// ---------------------------------------------------------------------------------------------
// Notification settings

export const NotificationSettings = Schema.Struct({
  user_id: Schema.String,
  email_recipients: Schema.NullOr(Schema.Array(Schema.String)).annotations({
    description: "Default recipients of the user's alert rules that name none"
  }),
  webhook_url: Schema.NullOr(Schema.String),
  webhook_secret: Schema.optional(Schema.String).annotations({
    description: "The key of the webhook's X-REC-Signature (HMAC-SHA256). Sent once, in the answer that set a new " +
      "webhook URL or rotated the secret; never again"
  }),
  updated_at: Schema.NullOr(Schema.String).annotations({ description: "null: never saved" })
}).annotations({ identifier: "NotificationSettings" })
export type NotificationSettings = typeof NotificationSettings.Type

export const NotificationSettingsUpdate = Contract.allErrors(Schema.Struct({
  email_recipients: Schema.optionalWith(RecipientsInput, { exact: true }),
  webhook_url: Schema.optional(Schema.NullOr(Schema.String)).annotations({
    description: "https URL receiving a signed JSON POST per alert; null removes the webhook"
  }),
  rotate_webhook_secret: Schema.optional(Schema.Boolean).annotations({
    description: "true: a new secret for the current webhook (answered once)"
  })
})).annotations({ identifier: "NotificationSettingsUpdate" })
export type NotificationSettingsUpdate = typeof NotificationSettingsUpdate.Type

// ---------------------------------------------------------------------------------------------
// Grid routes

export const NetworkPath = GridSchemas.NetworkPath

const RiskVectorList = Schema.optional(Schema.Array(GridSchemas.RiskVector)).annotations({
  description: "wind, heat or both (repeat the key); default both"
})

export const ShapesQuery = Schema.Struct({
  asset_type: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "Conductor types (repeat the key)" }),
  tile_id: Schema.optional(Schema.Array(GridSchemas.TileId)).annotations({ description: "Tiles (repeat the key)" })
})

export const RisksQuery = Schema.Struct({
  dates: Schema.NonEmptyArray(Values.IsoDate).annotations({ description: "Days (YYYY-MM-DD, repeat the key); at least one" }),
  risk_vector: RiskVectorList
})

export const RisksNowQuery = Schema.Struct({ risk_vector: RiskVectorList })

export const TrendlineQuery = Contract.allErrors(Schema.Struct({
  date_from: Values.IsoDate,
  date_to: Values.IsoDate,
  risk_vector: RiskVectorList
}).pipe(Schema.filter((q) => q.date_from <= q.date_to || "date_from must not be after date_to")))

/** The filter values of a network (`filters`): the digital twin's first row, or empty lists. */
export const Filters = GridSchemas.FiltersItem

export const emptyFilters: typeof Filters.Type = {
  parent_substations: [],
  lines: [],
  operational_units: [],
  municipalities: [],
  extent_min_lng: null,
  extent_min_lat: null,
  extent_max_lng: null,
  extent_max_lat: null
}

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** A feature assembled from a `shapes` row: its geometry, and the row's other columns as properties. */
export const ShapeFeature = Schema.Struct({
  type: Schema.Literal("Feature"),
  geometry: JsonObject.annotations({ description: "GeoJSON geometry as stored by the digital twin" }),
  properties: JsonObject
}).annotations({ identifier: "ShapeFeature" })

export const ShapesCollection = Schema.Struct({
  type: Schema.Literal("FeatureCollection"),
  features: Schema.Array(ShapeFeature)
}).annotations({ identifier: "ShapesCollection" })
export type ShapesCollection = typeof ShapesCollection.Type
