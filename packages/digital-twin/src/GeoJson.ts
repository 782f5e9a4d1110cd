/**
 * GeoJSON (RFC 7946) schemas for the digital twin's map responses. Positions are
 * `[longitude, latitude]` in WGS84, optionally with an elevation.
 */
import { Schema } from "effect"

export const Position = Schema.Tuple([Schema.Number, Schema.Number], Schema.Number).annotations({
  identifier: "Position",
  description: "[longitude, latitude] (WGS84), optionally followed by elevation"
})
export type Position = typeof Position.Type

export const Point = Schema.Struct({
  type: Schema.Literal("Point"),
  coordinates: Position
}).annotations({ identifier: "Point" })

export const LineString = Schema.Struct({
  type: Schema.Literal("LineString"),
  coordinates: Schema.Array(Position)
}).annotations({ identifier: "LineString" })

export const MultiLineString = Schema.Struct({
  type: Schema.Literal("MultiLineString"),
  coordinates: Schema.Array(Schema.Array(Position))
}).annotations({ identifier: "MultiLineString" })

export const Polygon = Schema.Struct({
  type: Schema.Literal("Polygon"),
  coordinates: Schema.Array(Schema.Array(Position))
}).annotations({ identifier: "Polygon" })

export const Geometry = Schema.Union(Point, LineString, MultiLineString, Polygon).annotations({
  identifier: "Geometry"
})
export type Geometry = typeof Geometry.Type

/** A Feature whose properties follow `properties`. */
export const Feature = <G extends Schema.Schema.Any, P extends Schema.Schema.Any>(geometry: G, properties: P) =>
  Schema.Struct({
    type: Schema.Literal("Feature"),
    id: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
    geometry,
    properties
  })

/** A FeatureCollection of `Feature(geometry, properties)`. */
export const FeatureCollection = <G extends Schema.Schema.Any, P extends Schema.Schema.Any>(geometry: G, properties: P) =>
  Schema.Struct({
    type: Schema.Literal("FeatureCollection"),
    features: Schema.Array(Feature(geometry, properties))
  })
