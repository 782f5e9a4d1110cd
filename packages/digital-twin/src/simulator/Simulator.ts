/**
 * The simulator's data service: every digital-twin answer, computed on demand from the world
 * (`World.ts`), the seed and the current time (Effect `Clock`, so tests can fix it).
 *
 * Grid data covers a rolling window of days around today (`historyDays` back, `forecastDays`
 * ahead), like the digital twin's gold tables; readings exist only for intervals that have
 * ended. Unknown networks, participants, devices and communities are `NotFound`.
 */
import { HttpErrors } from "@rec/platform"
import { Clock, Context, Effect, Layer } from "effect"
import type * as Energy from "../EnergySchemas.js"
import { communityFetchers, participantFetchers } from "../EnergySchemas.js"
import type * as GridSchemas from "../GridSchemas.js"
import { gridFetchers } from "../GridSchemas.js"
import * as EnergyModel from "./Energy.js"
import * as Grid from "./Grid.js"
import * as Random from "./Random.js"
import * as Synthetic from "./Synthetic.js"
import * as Time from "./Time.js"
import * as World from "./World.js"

export interface SimulatorOptions {
  /** Every generated value derives from it. */
  readonly seed: string
  /** Days of grid data before today. */
  readonly historyDays: number
  /** Days of grid forecasts after today. */
  readonly forecastDays: number
  /** Generated communities served beside `World.community` (`Synthetic.ts`; default none). */
  readonly syntheticCommunities?: ReadonlyArray<Synthetic.SyntheticCommunity> | undefined
}

export const defaultSimulatorOptions: SimulatorOptions = { seed: "rec-platform", historyDays: 7, forecastDays: 2 }

export class SimulatorOptionsTag extends Context.Tag("@rec/digital-twin/SimulatorOptions")<
  SimulatorOptionsTag,
  SimulatorOptions
>() {}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
type WindMapFeature = Mutable<GridSchemas.WindMap["features"][number]>
type HeatMapFeature = Mutable<GridSchemas.HeatMap["features"][number]>
type BoscoFeature = Mutable<GridSchemas.WindBosco["features"][number]>

interface Paging {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

/** A values-fetcher page: the limit is capped at the fetcher's maximum. */
export const page = <A>(items: ReadonlyArray<A>, paging: Paging, cap: number) => {
  const limit = Math.min(paging.limit ?? cap, cap)
  const offset = paging.offset ?? 0
  const slice = items.slice(offset, offset + limit)
  return { items: slice, limit, offset, count: slice.length }
}

const inList = (values: ReadonlyArray<string> | undefined, value: string | null) =>
  values === undefined || values.length === 0 || value !== null && values.includes(value)

const vectorsOf = (requested: GridSchemas.RiskVector | ReadonlyArray<GridSchemas.RiskVector> | undefined) =>
  new Set<GridSchemas.RiskVector>(requested === undefined ? ["wind", "heat"] : typeof requested === "string" ? [requested] : requested)

const levelOrder: Record<string, number> = { ALERT: 0, WARNING: 1, LOW: 2 }

const distribution = (levels: ReadonlyArray<string>): GridSchemas.AlertDistribution => {
  const counts = new Map<string, number>()
  for (const level of levels) counts.set(level, (counts.get(level) ?? 0) + 1)
  return [...counts.entries()]
    .map(([risk_level, events]) => ({ risk_level, events }))
    .sort((a, b) => b.events - a.events || (levelOrder[a.risk_level] ?? 9) - (levelOrder[b.risk_level] ?? 9))
}

const featureText = (segment: Grid.Segment) =>
  JSON.stringify({
    type: "Feature",
    geometry: { type: "LineString", coordinates: segment.coordinates },
    properties: { segment_id: segment.id, conductor_type: segment.conductor }
  })

const make = Effect.gen(function*() {
  const options = yield* SimulatorOptionsTag
  const { seed } = options
  const models = new Map(World.networks.map((spec) => [spec.id, Grid.buildNetwork(seed, spec)]))
  const communities = new Map<string, World.CommunitySpec>(World.communities.map((c) => [c.id, c]))
  for (const spec of options.syntheticCommunities ?? []) {
    if (communities.has(spec.id)) throw new RangeError(`community ${spec.id} exists already`)
    communities.set(spec.id, Synthetic.build(seed, spec))
  }
  /** Participant by `sub`, with their community (a map: synthetic communities can be large). */
  const participants = new Map<string, { readonly participant: World.ParticipantSpec; readonly community: World.CommunitySpec }>()
  /** Meter by community and sensor id. */
  const meters = new Map<string, World.ParticipantSpec>()
  for (const community of communities.values()) {
    for (const participant of community.participants) {
      participants.set(participant.sub, { participant, community })
      meters.set(`${community.id}\u0000${World.meterSensorId(participant)}`, participant)
    }
  }

  const today = Effect.map(Clock.currentTimeMillis, Time.isoDate)

  /** The days from `back` days before today to `ahead` days after it, oldest first. */
  const daysAround = (back: number, ahead: number) =>
    Effect.map(today, (day) => Array.from({ length: back + ahead + 1 }, (_, i) => Time.addDays(day, i - back)))

  /** The days held in the grid tables, oldest first. */
  const windowDays = daysAround(options.historyDays, options.forecastDays)

  const network = (id: string) => {
    const model = models.get(id)
    return model === undefined
      ? Effect.fail(new HttpErrors.NotFound({ detail: `Unknown network '${id}'` }))
      : Effect.succeed(model)
  }

  const selectDays = (requested: ReadonlyArray<string> | undefined) =>
    Effect.map(windowDays, (days) =>
      requested === undefined || requested.length === 0 ? days : days.filter((d) => requested.includes(d))
    )

  const areaMatch = (segment: Grid.Segment, filters: GridSchemas.AreaFilters) =>
    inList(filters.operational_unit, segment.operationalUnit) &&
    inList(filters.line_name, segment.lineName) &&
    inList(filters.substation_name, segment.primaryName)

  const segmentOrder = (a: Grid.Segment, b: Grid.Segment) => a.lineName.localeCompare(b.lineName) || a.id.localeCompare(b.id)

  const windRows = (model: Grid.NetworkModel, filters: GridSchemas.AreaFilters, onlyVegetated: boolean) =>
    Effect.map(selectDays(filters.dates), (days) =>
      [...days].reverse().flatMap((date) => {
        const regional = Grid.regionalGust(seed, model.spec, date)
        return model.segments
          .filter((s) => Grid.isOverhead(s) && (!onlyVegetated || s.vegetated) && areaMatch(s, filters))
          .sort(segmentOrder)
          .map((segment) => ({ segment, date, risk: Grid.windRisk(segment, regional) }))
      })
    )

  const heatRows = (model: Grid.NetworkModel, filters: GridSchemas.AreaFilters) =>
    Effect.map(selectDays(filters.dates), (days) =>
      [...days].reverse().flatMap((date) =>
        model.segments
          .filter((s) => !Grid.isOverhead(s) && areaMatch(s, filters))
          .sort(segmentOrder)
          .map((segment) => ({ segment, date, risk: Grid.heatRisk(seed, model.spec, segment, date) }))
      )
    )

  /** A segment's map feature on a date: the properties every risk map has, then the map's own. */
  const lineFeature = <P extends object>(
    segment: Grid.Segment,
    date: string,
    level: GridSchemas.KnownRiskLevel,
    properties: P
  ) => ({
    type: "Feature" as const,
    geometry: { type: "LineString" as const, coordinates: segment.coordinates },
    properties: {
      line_name: segment.lineName,
      conductor_type: segment.conductor,
      parent_substation_name: segment.primaryName,
      operational_unit: segment.operationalUnit,
      municipality: segment.municipality,
      date,
      risk_level: level,
      risk_color_hex: Grid.riskColors[level],
      ...properties
    }
  })

  const windMap = Effect.fn("Simulator.windMap")(function*(networkId: string, filters: GridSchemas.MapFilters) {
    const model = yield* network(networkId)
    const rows = yield* windRows(model, filters, false)
    const features = rows
      .filter((r) => inList(filters.risk_level, r.risk.level))
      .map(({ date, risk, segment }): WindMapFeature =>
        lineFeature(segment, date, risk.level, {
          feeder_id: segment.feederId,
          gust_excess: risk.gustExcess,
          wind_speed_max: risk.speedMax,
          wind_gusts_max: risk.gustMax
        })
      )
    return { type: "FeatureCollection" as const, features }
  })

  const windBosco = Effect.fn("Simulator.windBosco")(function*(networkId: string, filters: GridSchemas.AreaFilters) {
    const model = yield* network(networkId)
    const rows = yield* windRows(model, filters, true)
    const features = rows.map(({ date, risk, segment }): BoscoFeature =>
      lineFeature(segment, date, risk.level, {
        gust_excess: risk.gustExcess,
        wind_speed_max: risk.speedMax,
        wind_gusts_max: risk.gustMax,
        is_vegetated_zone: true,
        elevation_start_m: segment.elevationStart,
        elevation_end_m: segment.elevationEnd
      })
    )
    return { type: "FeatureCollection" as const, features }
  })

  const windAlertDistribution = Effect.fn("Simulator.windAlertDistribution")(
    function*(networkId: string, filters: GridSchemas.AreaFilters) {
      const model = yield* network(networkId)
      return distribution((yield* windRows(model, filters, false)).map((r) => r.risk.level))
    }
  )

  const heatMap = Effect.fn("Simulator.heatMap")(function*(networkId: string, filters: GridSchemas.MapFilters) {
    const model = yield* network(networkId)
    const rows = yield* heatRows(model, filters)
    const todayDate = yield* today
    const features = rows
      .filter((r) => inList(filters.risk_level, r.risk.level))
      .map(({ date, risk, segment }): HeatMapFeature =>
        lineFeature(segment, date, risk.level, {
          feeder_id: segment.feederId,
          temp_max_c: risk.tempMax,
          p90_threshold: risk.p90,
          consecutive_heat_days: risk.consecutiveDays,
          altitude_band: Grid.altitudeBand(Grid.segmentElevation(segment)),
          forecast_model: date < todayDate ? "analysis" : "ICON-2I"
        })
      )
    return { type: "FeatureCollection" as const, features }
  })

  const heatAlertDistribution = Effect.fn("Simulator.heatAlertDistribution")(
    function*(networkId: string, filters: GridSchemas.AreaFilters) {
      const model = yield* network(networkId)
      return distribution((yield* heatRows(model, filters)).map((r) => r.risk.level))
    }
  )

  const windTrend = Effect.fn("Simulator.windTrend")(function*(networkId: string) {
    const model = yield* network(networkId)
    const overhead = model.segments.filter(Grid.isOverhead)
    return (yield* daysAround(1, 2)).map((date) => {
      const regional = Grid.regionalGust(seed, model.spec, date)
      return { date, value: Math.max(...overhead.map((s) => Grid.windRisk(s, regional).gustExcess)) }
    })
  })

  const heatTrend = Effect.fn("Simulator.heatTrend")(function*(networkId: string) {
    const model = yield* network(networkId)
    const cables = model.segments.filter((s) => !Grid.isOverhead(s))
    return (yield* daysAround(3, 2)).map((date) => ({
      date,
      value: Math.max(...cables.map((s) => Random.round(Grid.segmentMaxTemp(seed, model.spec, s, date), 1)))
    }))
  })

  const substationsMap = Effect.fn("Simulator.substationsMap")(function*(networkId: string) {
    const model = yield* network(networkId)
    return {
      type: "FeatureCollection" as const,
      features: model.secondaries.map((s) => ({
        type: "Feature" as const,
        geometry: { type: "Point" as const, coordinates: s.at },
        properties: {
          asset_id: s.assetId,
          name: s.name,
          label_id: s.labelId,
          label: s.label,
          line_name: s.lineName,
          feeder_id: s.feederId,
          parent_substation_name: s.primaryName,
          operational_unit: s.operationalUnit,
          municipality: s.municipality,
          longitude: s.at[0],
          latitude: s.at[1]
        }
      }))
    }
  })

  const summary = Effect.fn("Simulator.summary")(function*(networkId: string) {
    const model = yield* network(networkId)
    const date = yield* today
    const regional = Grid.regionalGust(seed, model.spec, date)
    const counts = (levels: ReadonlyArray<string>) => ({
      LOW: levels.filter((l) => l === "LOW").length,
      WARNING: levels.filter((l) => l === "WARNING").length,
      ALERT: levels.filter((l) => l === "ALERT").length
    })
    const km = (type: string) =>
      Random.round(model.segments.filter((s) => s.conductor === type).reduce((sum, s) => sum + s.lengthM, 0) / 1000, 2)
    return {
      payload: {
        network_id: model.spec.id,
        name: model.spec.name,
        date,
        operational_units: model.spec.operationalUnits.map((u) => u.name),
        primary_substations: model.primaries.length,
        secondary_substations: model.secondaries.length,
        segments: model.segments.length,
        length_km: {
          overhead_bare: km("overhead_bare"),
          overhead_insulated: km("overhead_insulated"),
          underground_cable: km("underground_cable")
        },
        wind_today: counts(model.segments.filter(Grid.isOverhead).map((s) => Grid.windRisk(s, regional).level)),
        heat_today: counts(
          model.segments.filter((s) => !Grid.isOverhead(s)).map((s) => Grid.heatRisk(seed, model.spec, s, date).level)
        )
      }
    }
  })

  // --- grid fetchers -------------------------------------------------------------------

  const filters = Effect.fn("Simulator.filters")(function*(networkId: string, paging: Paging) {
    const model = yield* network(networkId)
    const sorted = (values: Iterable<string>) => [...new Set(values)].sort()
    const item = {
      parent_substations: sorted(model.primaries.map((p) => p.name)),
      lines: sorted(model.segments.map((s) => s.lineName)),
      operational_units: sorted(model.segments.map((s) => s.operationalUnit)),
      municipalities: sorted(model.segments.map((s) => s.municipality)),
      extent_min_lng: model.extent[0],
      extent_min_lat: model.extent[1],
      extent_max_lng: model.extent[2],
      extent_max_lat: model.extent[3]
    }
    return page([item], paging, gridFetchers.filters)
  })

  const tileIndex = Effect.fn("Simulator.tileIndex")(function*(networkId: string, paging: Paging) {
    const model = yield* network(networkId)
    const items = model.tiles.map((t) => {
      const [w, s, e, n] = t.bbox
      return {
        tile_id: t.id,
        tile_x: t.x,
        tile_y: t.y,
        tile_bbox_geojson: JSON.stringify({ type: "Polygon", coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] }),
        segment_count: t.segments
      }
    })
    return page(items, paging, gridFetchers.tile_index)
  })

  const shapes = Effect.fn("Simulator.shapes")(
    function*(networkId: string, payload: typeof GridSchemas.ShapesPayload.Type) {
      const model = yield* network(networkId)
      const items = model.segments
        .filter((s) => inList(payload.asset_type, s.conductor) && inList(payload.tile_ids, `tile_${s.tile.x}_${s.tile.y}`))
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((s) => ({
          segment_id: s.id,
          asset_type: s.conductor,
          asset_key: s.feederId,
          conductor_type: s.conductor,
          parent_substation_name: s.primaryName,
          operational_unit: s.operationalUnit,
          municipality: s.municipality,
          feeder_id: s.feederId,
          length_m: s.lengthM,
          is_vegetated_zone: s.vegetated,
          strike_tree_tier: s.strike?.tier ?? null,
          strike_tree_multiplier: s.strike?.multiplier ?? null,
          strike_density_per_km: s.strike?.densityPerKm ?? null,
          voltage_class: "MV 20 kV",
          label: s.lineName,
          label_id: s.id,
          feature_geojson: featureText(s)
        }))
      return page(items, payload, gridFetchers.shapes)
    }
  )

  /** A risks / risks_now item: a segment's level on a date, with the vector's own metrics. */
  const riskEntry = <M>(
    segment: Grid.Segment,
    date: string,
    vector: GridSchemas.RiskVector,
    level: GridSchemas.KnownRiskLevel,
    metrics: M
  ) => ({
    segment_id: segment.id,
    date,
    risk_vector: vector,
    risk_level: level,
    risk_color_hex: Grid.riskColors[level],
    metrics
  })

  const riskItem = (model: Grid.NetworkModel, segment: Grid.Segment, date: string, regional: number) => {
    if (Grid.isOverhead(segment)) {
      const risk = Grid.windRisk(segment, regional)
      return riskEntry(segment, date, "wind", risk.level, {
        gust_excess: risk.gustExcess,
        wind_gusts_max: risk.gustMax,
        wind_speed_max: risk.speedMax
      })
    }
    const risk = Grid.heatRisk(seed, model.spec, segment, date)
    return riskEntry(segment, date, "heat", risk.level, {
      temp_max_c: risk.tempMax,
      p90_threshold: risk.p90,
      consecutive_heat_days: risk.consecutiveDays
    })
  }

  const risks = Effect.fn("Simulator.risks")(
    function*(networkId: string, payload: typeof GridSchemas.RisksPayload.Type) {
      const model = yield* network(networkId)
      const vectors = vectorsOf(payload.risk_vector)
      const days = yield* selectDays(payload.dates)
      const items = days.flatMap((date) => {
        const regional = Grid.regionalGust(seed, model.spec, date)
        return model.segments
          .filter((s) => vectors.has(Grid.vectorOf(s)))
          .map((s) => riskItem(model, s, date, regional))
      })
      return page(items, payload, gridFetchers.risks)
    }
  )

  const risksNow = Effect.fn("Simulator.risksNow")(
    function*(networkId: string, payload: typeof GridSchemas.RisksNowPayload.Type) {
      const model = yield* network(networkId)
      const vectors = vectorsOf(payload.risk_vector)
      const now = yield* Clock.currentTimeMillis
      const hour = Time.floorTo(now, Time.hourMs)
      const localHour = new Date(hour + Time.italyOffsetHours(hour) * Time.hourMs).getUTCHours()
      const date = Time.isoDate(now)
      const regional = Grid.regionalGust(seed, model.spec, date)
      const validAt = Time.isoTimestamp(hour)
      const items = model.segments.filter((s) => vectors.has(Grid.vectorOf(s))).map((segment) => {
        if (Grid.isOverhead(segment)) {
          const risk = Grid.windRisk(segment, regional, Grid.windDiurnal(localHour))
          return riskEntry(segment, date, "wind", risk.level, {
            valid_at: validAt,
            gust_excess: risk.gustExcess,
            wind_gusts: risk.gustMax,
            wind_speed: risk.speedMax
          })
        }
        const day = Grid.heatRisk(seed, model.spec, segment, date)
        const temp = day.tempMax - Grid.heatDiurnalDrop(localHour)
        const level = Grid.heatLevel(temp, day.p90, day.consecutiveDays)
        return riskEntry(segment, date, "heat", level, { valid_at: validAt, temp_c: Random.round(temp, 1), p90_threshold: day.p90 })
      })
      return page(items, payload, gridFetchers.risks_now)
    }
  )

  const trendline = Effect.fn("Simulator.trendline")(
    function*(networkId: string, payload: typeof GridSchemas.TrendlinePayload.Type) {
      const model = yield* network(networkId)
      const vectors = vectorsOf(payload.risk_vector)
      const days = (yield* windowDays).filter((d) => d >= payload.date_from && d <= payload.date_to)
      const items = days.flatMap((date) => {
        const regional = Grid.regionalGust(seed, model.spec, date)
        return (["wind", "heat"] as const).filter((v) => vectors.has(v)).map((vector) => {
          const levels = model.segments
            .filter((s) => Grid.vectorOf(s) === vector)
            .map((s) => (vector === "wind" ? Grid.windRisk(s, regional).level : Grid.heatRisk(seed, model.spec, s, date).level))
          const alerts = levels.filter((l) => l === "ALERT").length
          const warnings = levels.filter((l) => l === "WARNING").length
          return {
            date,
            risk_vector: vector,
            alert_count: alerts,
            warning_count: warnings,
            total_segments: levels.length,
            risk_ratio: levels.length === 0 ? 0 : Random.round((alerts + warnings) / levels.length, 4),
            day_risk_level: alerts > 0 ? "ALERT" : warnings > 0 ? "WARNING" : "NORMAL"
          }
        })
      })
      return page(items, payload, gridFetchers.trendline)
    }
  )

  // --- participants ---------------------------------------------------------------------

  const participant = (sub: string) => {
    const found = participants.get(sub)
    return found === undefined
      ? Effect.fail(new HttpErrors.NotFound({ detail: `'${sub}' is not a participant of any community` }))
      : Effect.succeed(found)
  }

  const ownDevice = (found: { readonly participant: World.ParticipantSpec }, deviceId: string) =>
    deviceId === World.meterSensorId(found.participant)
      ? Effect.void
      : Effect.fail(new HttpErrors.NotFound({ detail: `Participant '${found.participant.sub}' has no device '${deviceId}'` }))

  const profile = Effect.fn("Simulator.profile")(function*(sub: string) {
    const { community, participant: p } = yield* participant(sub)
    return {
      participant_id: p.sub,
      name: p.name,
      membership: {
        community: { key: community.id, name: community.name, country: community.country },
        member: { key: p.memberKey, name: p.name, role: p.role, since: p.since }
      }
    }
  })

  const assets = Effect.fn("Simulator.assets")(function*(sub: string) {
    const { participant: p } = yield* participant(sub)
    const items: Array<Energy.Asset> = [
      {
        key: `${p.memberKey}-meter`,
        name: p.role === "producer" ? "Contatore di produzione" : "Contatore bidirezionale",
        asset_type: "meter",
        sensor_id: World.meterSensorId(p),
        device: { type: "smart_meter", manufacturer: "Landis+Gyr", model: "E450", rated_power_kw: null }
      }
    ]
    if (p.pvKwp > 0) {
      items.push({
        key: `${p.memberKey}-pv`,
        name: `Impianto fotovoltaico ${p.pvKwp} kWp`,
        asset_type: "pv_plant",
        sensor_id: null,
        device: { type: "pv_inverter", manufacturer: "Fronius", model: p.pvKwp > 20 ? "Tauro 50-3" : "Primo GEN24", rated_power_kw: p.pvKwp }
      })
    }
    items.push({ key: p.pod, name: `Punto di prelievo ${p.pod}`, asset_type: "delivery_point", sensor_id: null, device: null })
    return { items, count: items.length }
  })

  const range = (start: { readonly epochMillis: number }, end: { readonly epochMillis: number }) =>
    Effect.map(Clock.currentTimeMillis, (now) => EnergyModel.pastSlots(start.epochMillis, end.epochMillis, now))

  const metersData = Effect.fn("Simulator.metersData")(
    function*(sub: string, payload: typeof Energy.MetersDataPayload.Type) {
      const found = yield* participant(sub)
      yield* ownDevice(found, payload.device_id)
      const items = (yield* range(payload.start, payload.end)).map((slot) => {
        const r = EnergyModel.slotReading(seed, found.community, found.participant, slot)
        return {
          ts: Time.isoTimestamp(slot),
          device_id: payload.device_id,
          production_kwh: r.productionKwh,
          consumption_kwh: r.consumptionKwh,
          production_kw: Random.round(r.productionKwh * 4, 4),
          consumption_kw: Random.round(r.consumptionKwh * 4, 4)
        }
      })
      return page(items, payload, participantFetchers.meters_data)
    }
  )

  const virtualConsumption = Effect.fn("Simulator.virtualConsumption")(
    function*(sub: string, payload: typeof Energy.VirtualConsumptionPayload.Type) {
      const found = yield* participant(sub)
      const deviceId = payload.device_id ?? World.meterSensorId(found.participant)
      yield* ownDevice(found, deviceId)
      const index = found.community.participants.indexOf(found.participant)
      const items = (yield* range(payload.start, payload.end)).map((slot) => {
        const c = EnergyModel.communitySlot(seed, found.community, slot)
        return {
          ts: Time.isoTimestamp(slot),
          device_id: deviceId,
          consumption_kwh: c.readings[index]!.consumptionKwh,
          virtual_consumption_kwh: Random.round(c.virtualKwh[index]!, 4)
        }
      })
      return page(items, payload, participantFetchers.rec_virtual_consumption_per_device_15m)
    }
  )

  const flexibilityWindows = Effect.fn("Simulator.flexibilityWindows")(
    function*(sub: string, payload: typeof Energy.FlexibilityWindowsPayload.Type) {
      const found = yield* participant(sub)
      yield* ownDevice(found, payload.device_id)
      const now = yield* Clock.currentTimeMillis
      const p = found.participant
      const movablePerHour = (p.annualConsumptionKwh / 8760) * p.flexibleShare * 4
      const windows: Array<typeof Energy.FlexibilityWindow.Type> = []
      for (const dayOffset of [0, 1]) {
        const dayStart = Time.dateStart(Time.isoDate(now)) + dayOffset * Time.dayMs
        const date = Time.isoDate(dayStart)
        const clear = EnergyModel.clearness(seed, found.community, date)
        let run: Array<{ hour: number; surplus: number }> = []
        const flush = () => {
          for (let i = 0; i < run.length; i += 3) {
            const chunk = run.slice(i, i + 3)
            const start = chunk[0]!.hour
            const end = chunk[chunk.length - 1]!.hour + Time.hourMs
            const communityKwh = chunk.reduce((sum, h) => sum + h.surplus, 0)
            const estimated = Random.round(Math.min(communityKwh, movablePerHour * chunk.length), 2)
            windows.push({
              _id: `fw-${p.memberKey}-${Time.isoTimestamp(start).slice(0, 13).replace(/[-T]/g, "")}-${chunk.length}h`,
              window_start: Time.isoTimestamp(start),
              window_end: Time.isoTimestamp(end),
              community_kwh: Random.round(communityKwh, 2),
              estimated_kwh: estimated,
              reward_points_estimated: Math.round(estimated * 10),
              confidence: Random.round((dayOffset === 0 ? 0.85 : 0.7) - 0.1 * (1 - clear), 2)
            })
          }
          run = []
        }
        for (let h = 0; h < 24; h++) {
          const hour = dayStart + h * Time.hourMs
          const surplus = EnergyModel.expectedSurplusKwh(seed, found.community, hour)
          if (surplus > 0.5) run.push({ hour, surplus })
          else flush()
        }
        flush()
      }
      const items = windows
        .filter((w) => Date.parse(w.window_end) > now)
        .sort((a, b) => b.estimated_kwh - a.estimated_kwh || a.window_start.localeCompare(b.window_start))
      return page(items, payload, participantFetchers.rec_flexibility_windows)
    }
  )

  // --- communities ----------------------------------------------------------------------

  const communityById = (id: string) => {
    const found = communities.get(id)
    return found === undefined
      ? Effect.fail(new HttpErrors.NotFound({ detail: `Unknown community '${id}'` }))
      : Effect.succeed(found)
  }

  const aggregate = (community: World.CommunitySpec, slots: ReadonlyArray<number>) => {
    let production = 0
    let consumption = 0
    let self = 0
    for (const slot of slots) {
      const c = EnergyModel.communitySlot(seed, community, slot)
      production += c.productionKwh
      consumption += c.consumptionKwh
      self += c.selfConsumptionKwh
    }
    return { production, consumption, self }
  }

  const selfConsumption = Effect.fn("Simulator.selfConsumption")(
    function*(communityId: string, payload: typeof Energy.SelfConsumptionPayload.Type) {
      const community = yield* communityById(communityId)
      const now = yield* Clock.currentTimeMillis
      const hours = EnergyModel.pastSlots(payload.start.epochMillis, payload.end.epochMillis, now, Time.hourMs)
      const items = hours.map((hour) => {
        const sum = aggregate(community, [0, 1, 2, 3].map((q) => hour + q * Time.slotMs))
        return {
          ts: Time.isoTimestamp(hour),
          total_production_kwh: Random.round(sum.production, 3),
          total_consumption_kwh: Random.round(sum.consumption, 3),
          self_consumption_kwh: Random.round(sum.self, 3),
          total_production_kw: Random.round(sum.production, 3),
          total_consumption_kw: Random.round(sum.consumption, 3),
          self_consumption_kw: Random.round(sum.self, 3),
          members: community.participants.length
        }
      })
      return page(items, payload, communityFetchers.rec_self_consumption)
    }
  )

  const selfConsumptionDaily = Effect.fn("Simulator.selfConsumptionDaily")(
    function*(communityId: string, payload: typeof Energy.SelfConsumptionPayload.Type) {
      const community = yield* communityById(communityId)
      const now = yield* Clock.currentTimeMillis
      const slots = EnergyModel.pastSlots(payload.start.epochMillis, payload.end.epochMillis, now)
      const byDay = new Map<string, Array<number>>()
      for (const slot of slots) {
        const day = Time.isoDate(slot)
        const list = byDay.get(day) ?? []
        list.push(slot)
        byDay.set(day, list)
      }
      const items = [...byDay.entries()].map(([date, daySlots]) => {
        const sum = aggregate(community, daySlots)
        return {
          ts: Time.isoTimestamp(Time.dateStart(date)),
          date,
          total_production_kwh: Random.round(sum.production, 3),
          total_consumption_kwh: Random.round(sum.consumption, 3),
          self_consumption_kwh: Random.round(sum.self, 3),
          self_consumption_rate: sum.consumption > 0 ? Random.round(sum.self / sum.consumption, 4) : null,
          members: community.participants.length
        }
      })
      return page(items, payload, communityFetchers.rec_self_consumption_daily)
    }
  )

  const settlement = Effect.fn("Simulator.settlement")(
    function*(communityId: string, payload: typeof Energy.SettlementPayload.Type) {
      const community = yield* communityById(communityId)
      const member = meters.get(`${community.id}\u0000${payload.device_id}`)
      if (member === undefined) {
        return yield* Effect.fail(new HttpErrors.NotFound({ detail: `Community '${communityId}' has no device '${payload.device_id}'` }))
      }
      const now = yield* Clock.currentTimeMillis
      const hours = EnergyModel.pastSlots(payload.window_start.epochMillis, payload.window_end.epochMillis, now, Time.hourMs)
      const items = hours.map((hour) => ({
        ts: Time.isoTimestamp(hour),
        device_id: payload.device_id,
        consumption_kwh: Random.round(
          [0, 1, 2, 3].reduce((sum, q) => sum + EnergyModel.slotReading(seed, community, member, hour + q * Time.slotMs).consumptionKwh, 0),
          4
        ),
        window_start: Time.isoTimestamp(payload.window_start.epochMillis),
        window_end: Time.isoTimestamp(payload.window_end.epochMillis)
      }))
      return page(items, payload, communityFetchers.rec_settlement_1h)
    }
  )

  const forecast = Effect.fn("Simulator.forecast")(
    function*(communityId: string, payload: typeof Energy.ForecastPayload.Type) {
      const community = yield* communityById(communityId)
      const now = yield* Clock.currentTimeMillis
      const items: Array<typeof Energy.ForecastItem.Type> = []
      for (let hour = Time.ceilTo(payload.start.epochMillis, Time.hourMs); hour < payload.end.epochMillis; hour += Time.hourMs) {
        const prediction = EnergyModel.expectedSurplusKwh(seed, community, hour)
        const leadHours = Math.max(0, (hour - now) / Time.hourMs)
        const spread = 0.5 + 0.15 * Math.abs(prediction) + 0.02 * leadHours
        items.push({
          datetime: Time.isoTimestamp(hour).replace("T", " ").replace("Z", "+00:00"),
          prediction: Random.round(prediction, 3),
          period: "1h",
          lower: Random.round(prediction - spread, 3),
          upper: Random.round(prediction + spread, 3)
        })
      }
      return page(items, payload, communityFetchers.rec_forecast)
    }
  )

  return {
    options,
    windowDays,
    network,
    participant,
    community: communityById,
    windMap,
    windBosco,
    windAlertDistribution,
    windTrend,
    heatMap,
    heatAlertDistribution,
    heatTrend,
    substationsMap,
    summary,
    filters,
    tileIndex,
    shapes,
    risks,
    risksNow,
    trendline,
    profile,
    assets,
    metersData,
    virtualConsumption,
    flexibilityWindows,
    selfConsumption,
    selfConsumptionDaily,
    settlement,
    forecast
  } as const
})

/** The simulator's data: every answer of the digital-twin contract, from the seed and the clock. */
export class Simulator extends Effect.Service<Simulator>()("@rec/digital-twin/Simulator", {
  effect: make
}) {
  /** With explicit options (missing ones from `defaultSimulatorOptions`). */
  static readonly layer = (options: Partial<SimulatorOptions> = {}): Layer.Layer<Simulator> =>
    Simulator.Default.pipe(
      Layer.provide(Layer.succeed(SimulatorOptionsTag, { ...defaultSimulatorOptions, ...options }))
    )
}
