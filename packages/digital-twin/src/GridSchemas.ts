/**
 * Request and response schemas of the digital twin's grid domain (`/grid/{network_id}/...`):
 * wind and heat risk maps of the distribution lines, alert distributions, trends, the
 * substation layer, and the topology fetchers (tiles, shapes, per-segment risks, nowcast,
 * trendline). Field names are the digital twin's.
 *
 * Response schemas are lenient where the digital twin may leave values out (nullable numbers
 * and labels) and strict on what consumers key on (ids, dates, risk levels).
 */
import { Schema } from "effect"
import * as GeoJson from "./GeoJson.js"
import { FetcherPayload, FetchResult, IsoDate } from "./Values.js"

const NullableString = Schema.NullOr(Schema.String)
const NullableNumber = Schema.NullOr(Schema.Number)

export const NetworkId = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/)).annotations({
  identifier: "NetworkId",
  description: "Distribution network id: the alias of the DSO organization that operates it",
  examples: ["dso-alto-garda"]
})

export const NetworkPath = Schema.Struct({ network_id: NetworkId })

/** `LOW`, `WARNING` or `ALERT` (ordered by severity). */
export const RiskLevel = Schema.String.annotations({
  identifier: "RiskLevel",
  description: "LOW, WARNING or ALERT",
  examples: ["ALERT"]
})
export const riskLevels = ["LOW", "WARNING", "ALERT"] as const
export type KnownRiskLevel = (typeof riskLevels)[number]

/** `overhead_bare`, `overhead_insulated` or `underground_cable`. */
export const ConductorType = Schema.String.annotations({
  identifier: "ConductorType",
  description: "overhead_bare, overhead_insulated or underground_cable"
})
export const conductorTypes = ["overhead_bare", "overhead_insulated", "underground_cable"] as const
export type KnownConductorType = (typeof conductorTypes)[number]

export const RiskVector = Schema.Literal("wind", "heat").annotations({ identifier: "RiskVector" })
export type RiskVector = typeof RiskVector.Type
/** One hazard or several. */
export const RiskVectors = Schema.Union(RiskVector, Schema.Array(RiskVector))

const list = (description: string) => Schema.optional(Schema.Array(Schema.String)).annotations({ description })

/** Query parameters of the risk maps (repeat a key for several values: `?dates=a&dates=b`). */
export const MapFilters = Schema.Struct({
  dates: Schema.optional(Schema.Array(IsoDate)).annotations({ description: "Days to include (default: every day held)" }),
  operational_unit: list("Operational units"),
  line_name: list("Line names"),
  substation_name: list("Parent (primary) substation names"),
  risk_level: list("Risk levels (LOW, WARNING, ALERT)")
})
export type MapFilters = typeof MapFilters.Type

/** Query parameters of the alert distributions and the woodland map. */
export const AreaFilters = MapFilters.pipe(Schema.omit("risk_level"))
export type AreaFilters = typeof AreaFilters.Type

const segmentProperties = {
  line_name: Schema.String,
  conductor_type: ConductorType,
  parent_substation_name: NullableString,
  operational_unit: NullableString,
  municipality: NullableString,
  date: IsoDate,
  risk_level: RiskLevel,
  risk_color_hex: NullableString
}

const windMetrics = {
  gust_excess: NullableNumber.annotations({ description: "Gust speed above the conductor's design gust (m/s)" }),
  wind_speed_max: NullableNumber.annotations({ description: "Daily maximum mean wind speed (m/s)" }),
  wind_gusts_max: NullableNumber.annotations({ description: "Daily maximum gust (m/s)" })
}

export const WindMapProperties = Schema.Struct({
  ...segmentProperties,
  feeder_id: NullableString,
  ...windMetrics
}).annotations({ identifier: "WindMapProperties" })

export const WindBoscoProperties = Schema.Struct({
  ...segmentProperties,
  ...windMetrics,
  is_vegetated_zone: Schema.Boolean,
  elevation_start_m: NullableNumber,
  elevation_end_m: NullableNumber
}).annotations({ identifier: "WindBoscoProperties" })

export const HeatMapProperties = Schema.Struct({
  ...segmentProperties,
  feeder_id: NullableString,
  temp_max_c: NullableNumber.annotations({ description: "Daily maximum air temperature (°C)" }),
  p90_threshold: NullableNumber.annotations({ description: "90th percentile of the season's daily maxima (°C)" }),
  consecutive_heat_days: Schema.NullOr(Schema.Int),
  altitude_band: NullableString,
  forecast_model: NullableString
}).annotations({ identifier: "HeatMapProperties" })

export const SegmentGeometry = Schema.Union(GeoJson.LineString, GeoJson.MultiLineString)

/** Overhead conductors with their daily wind risk. */
export const WindMap = GeoJson.FeatureCollection(SegmentGeometry, WindMapProperties).annotations({ identifier: "WindMap" })
export type WindMap = typeof WindMap.Type
/** Overhead conductors in vegetated (woodland, "bosco") zones with their daily wind risk. */
export const WindBosco = GeoJson.FeatureCollection(SegmentGeometry, WindBoscoProperties).annotations({
  identifier: "WindBosco"
})
export type WindBosco = typeof WindBosco.Type
/** Underground cables with their daily heat risk. */
export const HeatMap = GeoJson.FeatureCollection(SegmentGeometry, HeatMapProperties).annotations({ identifier: "HeatMap" })
export type HeatMap = typeof HeatMap.Type

export const AlertDistribution = Schema.Array(
  Schema.Struct({ risk_level: RiskLevel, events: Schema.Int })
).annotations({ identifier: "AlertDistribution", description: "Segment-days per risk level, most frequent first" })
export type AlertDistribution = typeof AlertDistribution.Type

export const Trend = Schema.Array(
  Schema.Struct({ date: IsoDate, value: NullableNumber })
).annotations({
  identifier: "Trend",
  description: "Daily network maximum: gust excess (wind, yesterday to +2 days) or temperature (heat, -3 to +2 days)"
})
export type Trend = typeof Trend.Type

export const SubstationProperties = Schema.Struct({
  asset_id: Schema.String,
  name: Schema.String,
  label_id: NullableString,
  label: NullableString,
  line_name: NullableString,
  feeder_id: NullableString,
  parent_substation_name: NullableString,
  operational_unit: NullableString,
  municipality: NullableString,
  longitude: Schema.Number,
  latitude: Schema.Number
}).annotations({ identifier: "SubstationProperties" })

export const SubstationsMap = GeoJson.FeatureCollection(GeoJson.Point, SubstationProperties).annotations({
  identifier: "SubstationsMap"
})
export type SubstationsMap = typeof SubstationsMap.Type

const levelCounts = Schema.Struct({ LOW: Schema.Int, WARNING: Schema.Int, ALERT: Schema.Int })

/**
 * Network summary. The original digital twin's grid domain does not implement it (it answers
 * 501); the simulator returns this so the gateway's `/summary` has a defined shape.
 */
export const GridSummary = Schema.Struct({
  payload: Schema.Struct({
    network_id: NetworkId,
    name: Schema.String,
    date: IsoDate,
    operational_units: Schema.Array(Schema.String),
    primary_substations: Schema.Int,
    secondary_substations: Schema.Int,
    segments: Schema.Int,
    length_km: Schema.Struct({
      overhead_bare: Schema.Number,
      overhead_insulated: Schema.Number,
      underground_cable: Schema.Number
    }),
    wind_today: levelCounts,
    heat_today: levelCounts
  })
}).annotations({ identifier: "GridSummary" })
export type GridSummary = typeof GridSummary.Type

/** GeoJSON as the digital twin stores it: JSON text, or already an object. */
export const GeoJsonValue = Schema.Union(Schema.String, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

// --- values fetchers --------------------------------------------------------------------

export const FiltersPayload = FetcherPayload({}).annotations({ identifier: "FiltersPayload" })
export const FiltersItem = Schema.Struct({
  parent_substations: Schema.Array(Schema.String),
  lines: Schema.Array(Schema.String),
  operational_units: Schema.Array(Schema.String),
  municipalities: Schema.Array(Schema.String),
  extent_min_lng: NullableNumber,
  extent_min_lat: NullableNumber,
  extent_max_lng: NullableNumber,
  extent_max_lat: NullableNumber
}).annotations({ identifier: "FiltersItem" })
export const FiltersResult = FetchResult(FiltersItem)

export const TileIndexPayload = FetcherPayload({}).annotations({ identifier: "TileIndexPayload" })
export const TileIndexItem = Schema.Struct({
  tile_id: Schema.String,
  tile_x: Schema.Int,
  tile_y: Schema.Int,
  tile_bbox_geojson: GeoJsonValue,
  segment_count: Schema.Int
}).annotations({ identifier: "TileIndexItem" })
export const TileIndexResult = FetchResult(TileIndexItem)

export const TileId = Schema.String.pipe(Schema.pattern(/^tile_\d+_\d+$/)).annotations({
  identifier: "TileId",
  examples: ["tile_3_5"]
})

export const ShapesPayload = FetcherPayload({
  asset_type: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "Conductor types to include" }),
  tile_ids: Schema.optional(Schema.Array(TileId)).annotations({ description: "Tiles to include" })
}).annotations({ identifier: "ShapesPayload" })
export const ShapeItem = Schema.Struct({
  segment_id: Schema.String,
  asset_type: Schema.String,
  asset_key: NullableString,
  conductor_type: ConductorType,
  parent_substation_name: NullableString,
  operational_unit: NullableString,
  municipality: NullableString,
  feeder_id: NullableString,
  length_m: NullableNumber,
  is_vegetated_zone: Schema.NullOr(Schema.Boolean),
  strike_tree_tier: NullableString,
  strike_tree_multiplier: NullableNumber,
  strike_density_per_km: NullableNumber,
  voltage_class: NullableString,
  label: NullableString,
  label_id: NullableString,
  feature_geojson: Schema.NullOr(GeoJsonValue)
}).annotations({ identifier: "ShapeItem" })
export const ShapesResult = FetchResult(ShapeItem)

export const RisksPayload = FetcherPayload({
  dates: Schema.NonEmptyArray(IsoDate),
  risk_vector: Schema.optional(RiskVectors)
}).annotations({ identifier: "RisksPayload" })
export const RiskItem = Schema.Struct({
  segment_id: Schema.String,
  date: IsoDate,
  risk_vector: Schema.String,
  risk_level: RiskLevel,
  risk_color_hex: NullableString,
  metrics: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "RiskItem" })
export const RisksResult = FetchResult(RiskItem)

export const RisksNowPayload = FetcherPayload({
  risk_vector: Schema.optional(RiskVectors)
}).annotations({ identifier: "RisksNowPayload" })
export const RisksNowResult = FetchResult(RiskItem)

export const TrendlinePayload = FetcherPayload({
  date_from: IsoDate,
  date_to: IsoDate,
  risk_vector: Schema.optional(RiskVectors)
}).pipe(
  Schema.filter((p) => p.date_from <= p.date_to || "date_from must not be after date_to")
).annotations({ identifier: "TrendlinePayload" })
export const TrendlineItem = Schema.Struct({
  date: IsoDate,
  risk_vector: Schema.String,
  alert_count: Schema.Int,
  warning_count: Schema.Int,
  total_segments: Schema.Int,
  risk_ratio: Schema.Number,
  day_risk_level: Schema.String.annotations({ description: "NORMAL, WARNING or ALERT" })
}).annotations({ identifier: "TrendlineItem" })
export const TrendlineResult = FetchResult(TrendlineItem)

/** The grid fetchers and their page-size caps (as in the digital twin's specs). */
export const gridFetchers = {
  filters: 1,
  tile_index: 500,
  shapes: 10_000,
  risks: 10_000,
  risks_now: 10_000,
  trendline: 500
} as const
