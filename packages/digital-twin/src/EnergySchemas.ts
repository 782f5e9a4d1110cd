/**
 * Request and response schemas of the digital twin's participant (`/participants/{sub}/...`)
 * and community (`/communities/it/{community_id}/...`) endpoints: profile, assets, 15-minute
 * meter readings, shared ("virtual") consumption, flexibility windows, community
 * self-consumption, settlement and forecast. Energies are kWh; `*_kw` fields are the average
 * power over the row's interval (kept because older consumers sum `*_kw × 0.25`).
 */
import { Schema } from "effect"
import { FetcherPayload, FetchResult, IsoDate, RequestDateTime, Timestamp, windowCheck } from "./Values.js"

const NullableString = Schema.NullOr(Schema.String)
const NullableNumber = Schema.NullOr(Schema.Number)

export const ParticipantId = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/)).annotations({
  identifier: "ParticipantId",
  description: "The participant's identity-provider subject (`sub`)"
})
export const ParticipantPath = Schema.Struct({ sub: ParticipantId })

export const CommunityId = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/)).annotations({
  identifier: "CommunityId",
  examples: ["it-energy-community"]
})
export const CommunityPath = Schema.Struct({ community_id: CommunityId })

export const Membership = Schema.Struct({
  community: Schema.Struct({ key: CommunityId, name: Schema.String, country: Schema.String }),
  member: Schema.Struct({
    key: Schema.String,
    name: Schema.String,
    role: Schema.String.annotations({ description: "prosumer, consumer or producer" }),
    since: Schema.NullOr(IsoDate)
  })
}).annotations({ identifier: "Membership" })

export const Profile = Schema.Struct({
  participant_id: ParticipantId,
  name: NullableString,
  membership: Schema.NullOr(Membership)
}).annotations({ identifier: "Profile" })
export type Profile = typeof Profile.Type

export const Device = Schema.Struct({
  type: Schema.String,
  manufacturer: NullableString,
  model: NullableString,
  rated_power_kw: NullableNumber
}).annotations({ identifier: "Device" })

export const Asset = Schema.Struct({
  key: Schema.String,
  name: Schema.String,
  asset_type: Schema.String.annotations({ description: "meter, pv_plant, battery or delivery_point" }),
  sensor_id: NullableString.annotations({ description: "Id of the device's data stream (null: no readings)" }),
  device: Schema.NullOr(Device)
}).annotations({ identifier: "Asset" })
export type Asset = typeof Asset.Type

export const AssetList = Schema.Struct({ items: Schema.Array(Asset), count: Schema.Int }).annotations({
  identifier: "AssetList"
})
export type AssetList = typeof AssetList.Type

/** Readings are served for windows of at most this many days. */
export const maxWindowDays = 366

const timeWindow = { start: RequestDateTime, end: RequestDateTime }

// --- participant fetchers --------------------------------------------------------------

export const MetersDataPayload = FetcherPayload({ device_id: Schema.NonEmptyString, ...timeWindow }).pipe(
  Schema.filter(windowCheck(maxWindowDays))
).annotations({ identifier: "MetersDataPayload" })
export const MeterReading = Schema.Struct({
  ts: Timestamp.annotations({ description: "Start of the 15-minute interval" }),
  device_id: Schema.String,
  production_kwh: Schema.Number,
  consumption_kwh: Schema.Number,
  production_kw: Schema.Number,
  consumption_kw: Schema.Number
}).annotations({ identifier: "MeterReading" })
export const MetersDataResult = FetchResult(MeterReading)

export const VirtualConsumptionPayload = FetcherPayload({
  device_id: Schema.optional(Schema.NonEmptyString),
  ...timeWindow
}).pipe(Schema.filter(windowCheck(maxWindowDays))).annotations({ identifier: "VirtualConsumptionPayload" })
export const VirtualConsumptionItem = Schema.Struct({
  ts: Timestamp,
  device_id: Schema.String,
  consumption_kwh: Schema.Number,
  virtual_consumption_kwh: Schema.Number.annotations({
    description: "The device's share of the community's self-consumed energy in the interval"
  })
}).annotations({ identifier: "VirtualConsumptionItem" })
export const VirtualConsumptionResult = FetchResult(VirtualConsumptionItem)

export const FlexibilityWindowsPayload = FetcherPayload({ device_id: Schema.NonEmptyString }).annotations({
  identifier: "FlexibilityWindowsPayload"
})
export const FlexibilityWindow = Schema.Struct({
  _id: Schema.String,
  window_start: Timestamp,
  window_end: Timestamp,
  community_kwh: Schema.Number.annotations({ description: "Community surplus expected in the window" }),
  estimated_kwh: Schema.Number.annotations({ description: "Consumption the device could move into the window" }),
  reward_points_estimated: Schema.Number,
  confidence: Schema.Number
}).annotations({ identifier: "FlexibilityWindow" })
export const FlexibilityWindowsResult = FetchResult(FlexibilityWindow)

// --- community fetchers ----------------------------------------------------------------

export const SelfConsumptionPayload = FetcherPayload(timeWindow).pipe(
  Schema.filter(windowCheck(maxWindowDays))
).annotations({ identifier: "SelfConsumptionPayload" })
export const SelfConsumptionItem = Schema.Struct({
  ts: Timestamp.annotations({ description: "Start of the hour" }),
  total_production_kwh: Schema.Number,
  total_consumption_kwh: Schema.Number,
  self_consumption_kwh: Schema.Number,
  total_production_kw: Schema.Number,
  total_consumption_kw: Schema.Number,
  self_consumption_kw: Schema.Number,
  members: Schema.Int
}).annotations({ identifier: "SelfConsumptionItem" })
export const SelfConsumptionResult = FetchResult(SelfConsumptionItem)

export const SelfConsumptionDailyItem = Schema.Struct({
  ts: Timestamp.annotations({ description: "Midnight (UTC) starting the day" }),
  date: IsoDate,
  total_production_kwh: Schema.Number,
  total_consumption_kwh: Schema.Number,
  self_consumption_kwh: Schema.Number,
  self_consumption_rate: NullableNumber.annotations({ description: "self-consumption / consumption" }),
  members: Schema.Int
}).annotations({ identifier: "SelfConsumptionDailyItem" })
export const SelfConsumptionDailyResult = FetchResult(SelfConsumptionDailyItem)

export const SettlementPayload = FetcherPayload({
  device_id: Schema.NonEmptyString,
  window_start: RequestDateTime,
  window_end: RequestDateTime
}).pipe(
  Schema.filter((p) =>
    p.window_end.epochMillis > p.window_start.epochMillis && p.window_end.epochMillis - p.window_start.epochMillis <= 86_400_000 ||
    "window_end must be after window_start, at most 24 hours later"
  )
).annotations({ identifier: "SettlementPayload" })
export const SettlementItem = Schema.Struct({
  ts: Timestamp,
  device_id: Schema.String,
  consumption_kwh: Schema.Number,
  window_start: Timestamp,
  window_end: Timestamp
}).annotations({ identifier: "SettlementItem" })
export const SettlementResult = FetchResult(SettlementItem)

export const ForecastPayload = FetcherPayload(timeWindow).pipe(Schema.filter(windowCheck(7))).annotations({
  identifier: "ForecastPayload"
})
export const ForecastItem = Schema.Struct({
  datetime: Schema.String.annotations({ description: "Start of the hour, `YYYY-MM-DD HH:MM:SS+00:00`" }),
  prediction: Schema.Number.annotations({ description: "Expected community surplus (production - consumption), kWh" }),
  period: Schema.String.annotations({ description: "Resolution of the row (1h)" }),
  lower: Schema.Number,
  upper: Schema.Number
}).annotations({ identifier: "ForecastItem" })
export const ForecastResult = FetchResult(ForecastItem)

/** Participant and community fetchers with their page-size caps. */
export const participantFetchers = {
  meters_data: 40_000,
  rec_virtual_consumption_per_device_15m: 40_000,
  rec_flexibility_windows: 20
} as const

export const communityFetchers = {
  rec_self_consumption: 10_000,
  rec_self_consumption_daily: 400,
  rec_settlement_1h: 24,
  rec_forecast: 48
} as const
