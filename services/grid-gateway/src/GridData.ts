/**
 * The grid routes: the caller's access to the network (`GridAccess`, action `read`), then the
 * digital twin's data through `@rec/digital-twin`'s typed client with the gateway's
 * client-credentials token (reference grid-gateway.md §3.4: one digital-twin call per route,
 * the path's network id forwarded, absent filters left out). Transforms: `filters` is the first
 * row (or empty lists), `shapes` a GeoJSON FeatureCollection assembled from the rows.
 *
 * Digital-twin failures follow the platform's upstream rule (`Upstream`): its 4xx kept, its 5xx
 * or an unreadable answer 502, unreachable 502, no answer in time 504, no token 503, each with a
 * `detail` naming the operation. One exception: the twin refusing the gateway's own token (401)
 * is a 502, since the caller's credentials are not the ones refused.
 */
import { type DigitalTwinError, DigitalTwinClient, type GridSchemas } from "@rec/digital-twin"
import { Upstream } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Domain from "./Domain.js"
import { GridAccess } from "./GridAccess.js"

export const upstreamName = "digital twin"

/** A digital-twin failure as the platform's upstream failure. */
export const toUpstreamFailure = (error: DigitalTwinError): Upstream.UpstreamFailure => {
  const { operation } = error
  if (error.upstreamStatus === 401) {
    return new Upstream.UpstreamFailure({
      upstream: upstreamName,
      operation,
      status: 502,
      upstreamStatus: 401,
      detail: `Digital twin refused the gateway's credentials (${operation}); the gateway's client is misconfigured`,
      upstreamDetail: error.message
    })
  }
  if (error.upstreamStatus !== undefined) {
    return Upstream.answered(upstreamName, operation, error.upstreamStatus, error.message)
  }
  const detail = error.status === 503
    ? `No credentials for the digital twin (${operation}): ${error.message}`
    : error.status === 504
    ? `Digital twin did not answer ${operation} in time: ${error.message}`
    : `Digital twin call ${operation} failed: ${error.message}`
  return new Upstream.UpstreamFailure({ upstream: upstreamName, operation, status: error.status, detail })
}

export const toHttpError = (error: DigitalTwinError) => Upstream.toHttpError(toUpstreamFailure(error))

const isObject = (u: unknown): u is Record<string, unknown> => Predicate.isRecord(u) && !Array.isArray(u)

/**
 * The `shapes` rows as a FeatureCollection (reference §3.4): per row, `feature_geojson` (JSON
 * text or an object; a stored Feature's `geometry`, or a bare geometry) is the geometry and the
 * other columns, without `geom`, the properties. Rows without a usable geometry (missing, null,
 * unparseable, not an object, empty) are left out.
 */
export const assembleShapes = (rows: ReadonlyArray<Readonly<Record<string, unknown>>>): Domain.ShapesCollection => {
  const features: Array<Domain.ShapesCollection["features"][number]> = []
  for (const row of rows) {
    const { feature_geojson: stored, geom: _geom, ...properties } = row
    let value: unknown = stored
    if (typeof stored === "string") {
      try {
        value = JSON.parse(stored)
      } catch {
        continue
      }
    }
    if (!isObject(value)) continue
    const geometry = "geometry" in value ? value.geometry : value
    if (!isObject(geometry) || Object.keys(geometry).length === 0) continue
    features.push({ type: "Feature", geometry, properties })
  }
  return { type: "FeatureCollection", features }
}

/** The most rows a topology route asks for (the digital twin's caps). */
const rowLimit = 10_000

export class GridData extends Effect.Service<GridData>()("@rec/grid-gateway/GridData", {
  effect: Effect.gen(function*() {
    const dt = yield* DigitalTwinClient
    const access = yield* GridAccess

    /** Access to the network, then the digital twin's call; failures as platform errors. */
    const read = <A>(networkId: string, call: Effect.Effect<A, DigitalTwinError>) =>
      Effect.zipRight(access.check("read", networkId), Effect.mapError(call, toHttpError))

    const grid = dt.grid
    return {
      windMap: (id: string, filters: GridSchemas.MapFilters) => read(id, grid.windMap(id, filters)),
      windBosco: (id: string, filters: GridSchemas.AreaFilters) => read(id, grid.windBosco(id, filters)),
      windAlertDistribution: (id: string, filters: GridSchemas.AreaFilters) =>
        read(id, grid.windAlertDistribution(id, filters)),
      windTrend: (id: string) => read(id, grid.windTrend(id)),
      heatMap: (id: string, filters: GridSchemas.MapFilters) => read(id, grid.heatMap(id, filters)),
      heatAlertDistribution: (id: string, filters: GridSchemas.AreaFilters) =>
        read(id, grid.heatAlertDistribution(id, filters)),
      heatTrend: (id: string) => read(id, grid.heatTrend(id)),
      substationsMap: (id: string) => read(id, grid.substationsMap(id)),
      summary: (id: string) => read(id, grid.summary(id)),
      filters: (id: string) =>
        read(id, Effect.map(grid.filters(id, { limit: 1 }), (result) => result.items[0] ?? Domain.emptyFilters)),
      tileIndex: (id: string) => read(id, grid.tileIndex(id)),
      shapes: (id: string, query: typeof Domain.ShapesQuery.Type) =>
        read(
          id,
          Effect.map(
            grid.shapes(id, {
              ...(query.asset_type === undefined ? {} : { asset_type: query.asset_type }),
              ...(query.tile_id === undefined ? {} : { tile_ids: query.tile_id }),
              limit: rowLimit
            }),
            (result) => assembleShapes(result.items)
          )
        ),
      risks: (id: string, query: typeof Domain.RisksQuery.Type) =>
        read(
          id,
          grid.risks(id, {
            dates: query.dates,
            ...(query.risk_vector === undefined ? {} : { risk_vector: query.risk_vector }),
            limit: rowLimit
          })
        ),
      // The nowcast: never any dates (reference §3.4).
      risksNow: (id: string, query: typeof Domain.RisksNowQuery.Type) =>
        read(id, grid.risksNow(id, { ...(query.risk_vector === undefined ? {} : { risk_vector: query.risk_vector }), limit: rowLimit })),
      trendline: (id: string, query: typeof Domain.TrendlineQuery.Type) =>
        read(
          id,
          grid.trendline(id, {
            date_from: query.date_from,
            date_to: query.date_to,
            ...(query.risk_vector === undefined ? {} : { risk_vector: query.risk_vector })
          })
        )
    }
  })
}) {}
