import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Either, Schema, TestClock } from "effect"
import * as EnergySchemas from "../src/EnergySchemas.js"
import * as GridSchemas from "../src/GridSchemas.js"
import * as Energy from "../src/simulator/Energy.js"
import { Simulator } from "../src/simulator/Simulator.js"
import * as Time from "../src/simulator/Time.js"
import * as World from "../src/simulator/World.js"

const now = Date.parse("2026-07-15T10:20:00Z")
const at = (iso: string) => DateTime.unsafeMake(iso)
const giulia = World.community.participants[0]!
const giuliaMeter = World.meterSensorId(giulia)

/** Runs `f` against a fresh simulator at `time`. */
const withSimulator = <A, E>(
  f: (sim: Simulator) => Effect.Effect<A, E>,
  options: { readonly seed?: string; readonly time?: number } = {}
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(options.time ?? now)
    return yield* Effect.flatMap(Simulator, f)
  }).pipe(Effect.provide(Simulator.layer(options.seed === undefined ? {} : { seed: options.seed })))

/** Every grid answer of a network, to compare whole worlds. */
const gridSnapshot = (sim: Simulator, id: string) =>
  Effect.all({
    windMap: sim.windMap(id, {}),
    heatMap: sim.heatMap(id, {}),
    substations: sim.substationsMap(id),
    shapes: sim.shapes(id, {}),
    risksNow: sim.risksNow(id, {}),
    windTrend: sim.windTrend(id),
    heatTrend: sim.heatTrend(id)
  })

describe("determinism", () => {
  it.effect("the same seed and time give identical data, a different seed different data", () =>
    Effect.gen(function*() {
      for (const network of World.networks) {
        const first = yield* withSimulator((sim) => gridSnapshot(sim, network.id))
        const second = yield* withSimulator((sim) => gridSnapshot(sim, network.id))
        expect(second).toEqual(first)
        const other = yield* withSimulator((sim) => gridSnapshot(sim, network.id), { seed: "another-seed" })
        expect(other.shapes).not.toEqual(first.shapes)
      }
      const window = { device_id: giuliaMeter, start: at("2026-07-10T00:00:00Z"), end: at("2026-07-12T00:00:00Z") }
      const meters = yield* withSimulator((sim) => sim.metersData(giulia.sub, window))
      expect(yield* withSimulator((sim) => sim.metersData(giulia.sub, window))).toEqual(meters)
      expect((yield* withSimulator((sim) => sim.metersData(giulia.sub, window), { seed: "x" })).items).not.toEqual(meters.items)
    }))

  it.effect("a day's risk does not depend on the day it is asked on", () =>
    Effect.gen(function*() {
      const day = "2026-07-14"
      const asked = (time: number) =>
        withSimulator((sim) => sim.risks("dso-valsugana", { dates: [day] }), { time })
      const onTheDay = yield* asked(Date.parse("2026-07-14T09:00:00Z"))
      const threeDaysLater = yield* asked(Date.parse("2026-07-17T18:00:00Z"))
      expect(onTheDay.count).toBeGreaterThan(0)
      expect(threeDaysLater.items).toEqual(onTheDay.items)
    }))
})

describe("grid", () => {
  it.effect("builds networks of plausible lines in Trentino", () =>
    withSimulator((sim) =>
      Effect.gen(function*() {
        for (const spec of World.networks) {
          const model = yield* sim.network(spec.id)
          expect(model.segments.length).toBeGreaterThan(80)
          expect(new Set(model.segments.map((s) => s.conductor))).toEqual(
            new Set(["overhead_bare", "overhead_insulated", "underground_cable"])
          )
          expect(model.secondaries.length).toBeGreaterThan(20)
          for (const segment of model.segments) {
            for (const [lon, lat] of segment.coordinates) {
              expect(lon).toBeGreaterThan(10.5)
              expect(lon).toBeLessThan(11.7)
              expect(lat).toBeGreaterThan(45.75)
              expect(lat).toBeLessThan(46.6)
            }
            expect(segment.lengthM).toBeGreaterThan(200)
            expect(segment.lengthM).toBeLessThan(1000)
          }
          expect(new Set(model.segments.map((s) => s.id)).size).toBe(model.segments.length)
        }
        expect((yield* Effect.flip(sim.network("dso-nowhere")))._tag).toBe("NotFound")
      })
    ))

  it.effect("holds a rolling window of days and filters maps like the digital twin", () =>
    withSimulator((sim) =>
      Effect.gen(function*() {
        const days = yield* sim.windowDays
        expect(days[0]).toBe("2026-07-08")
        expect(days.at(-1)).toBe("2026-07-17")
        const all = yield* sim.windMap("dso-alto-garda", {})
        const model = yield* sim.network("dso-alto-garda")
        const overhead = model.segments.filter((s) => s.conductor !== "underground_cable").length
        expect(all.features.length).toBe(overhead * days.length)
        expect(all.features[0]!.properties.date).toBe("2026-07-17")
        expect(Either.isRight(Schema.decodeUnknownEither(GridSchemas.WindMap)(all))).toBe(true)
        const levels = new Set(all.features.map((f) => f.properties.risk_level))
        expect([...levels].every((l) => ["LOW", "WARNING", "ALERT"].includes(l))).toBe(true)
        expect(levels.size).toBeGreaterThan(1)
        const distribution = yield* sim.windAlertDistribution("dso-alto-garda", {})
        expect(distribution.reduce((sum, d) => sum + d.events, 0)).toBe(all.features.length)
        const counts = distribution.map((d) => d.events)
        expect(counts).toEqual([...counts].sort((a, b) => b - a))
        const alerts = yield* sim.windMap("dso-alto-garda", { risk_level: ["ALERT"] })
        expect(alerts.features.every((f) => f.properties.risk_level === "ALERT" && f.properties.gust_excess! >= 3)).toBe(true)
        const oneDay = yield* sim.windMap("dso-alto-garda", { dates: ["2026-07-15"], operational_unit: ["Zona Ledro e Tenno"] })
        expect(oneDay.features.length).toBeGreaterThan(0)
        expect(oneDay.features.every((f) => f.properties.operational_unit === "Zona Ledro e Tenno")).toBe(true)
        expect((yield* sim.windMap("dso-alto-garda", { dates: ["2026-06-01"] })).features).toEqual([])
        const bosco = yield* sim.windBosco("dso-alto-garda", {})
        expect(bosco.features.every((f) => f.properties.is_vegetated_zone)).toBe(true)
        const heat = yield* sim.heatMap("dso-alto-garda", { dates: ["2026-07-15"] })
        expect(heat.features.every((f) => f.properties.conductor_type === "underground_cable")).toBe(true)
        expect(heat.features.length).toBe(model.segments.length - overhead)
      })
    ))

  it.effect("serves trends, summary, tiles, shapes, risks and the trendline consistently", () =>
    withSimulator((sim) =>
      Effect.gen(function*() {
        const id = "dso-val-di-non"
        expect((yield* sim.windTrend(id)).map((t) => t.date)).toEqual(["2026-07-14", "2026-07-15", "2026-07-16", "2026-07-17"])
        expect((yield* sim.heatTrend(id)).length).toBe(6)
        const summary = yield* sim.summary(id)
        const model = yield* sim.network(id)
        expect(summary.payload.segments).toBe(model.segments.length)
        expect(summary.payload.wind_today.LOW + summary.payload.wind_today.WARNING + summary.payload.wind_today.ALERT)
          .toBe(model.segments.filter((s) => s.conductor !== "underground_cable").length)
        const tiles = yield* sim.tileIndex(id, {})
        expect(tiles.items.reduce((sum, t) => sum + t.segment_count, 0)).toBe(model.segments.length)
        const firstTile = tiles.items[0]!.tile_id
        const inTile = yield* sim.shapes(id, { tile_ids: [firstTile] })
        expect(inTile.count).toBe(tiles.items[0]!.segment_count)
        const cables = yield* sim.shapes(id, { asset_type: ["underground_cable"], limit: 5, offset: 2 })
        expect(cables).toMatchObject({ limit: 5, offset: 2, count: 5 })
        const feature = JSON.parse(String(cables.items[0]!.feature_geojson))
        expect(feature).toMatchObject({ type: "Feature", geometry: { type: "LineString" } })
        const capped = yield* sim.shapes(id, { limit: 50_000 })
        expect(capped.limit).toBe(10_000)
        const cableCount = model.segments.filter((s) => s.conductor === "underground_cable").length
        const risks = yield* sim.risks(id, { dates: ["2026-07-15", "2026-07-16"], risk_vector: "heat" })
        expect(risks.count).toBe(2 * cableCount)
        expect(risks.items.every((r) => r.risk_vector === "heat" && "temp_max_c" in r.metrics)).toBe(true)
        const trend = yield* sim.trendline(id, { date_from: "2026-07-01", date_to: "2026-07-31", risk_vector: ["wind"] })
        expect(trend.items.map((t) => t.date)).toEqual(yield* sim.windowDays)
        for (const row of trend.items) {
          const day = yield* sim.risks(id, { dates: [row.date], risk_vector: "wind" })
          expect(row.alert_count).toBe(day.items.filter((r) => r.risk_level === "ALERT").length)
          expect(row.day_risk_level).toBe(row.alert_count > 0 ? "ALERT" : row.warning_count > 0 ? "WARNING" : "NORMAL")
        }
        const now = yield* sim.risksNow(id, {})
        expect(now.count).toBe(model.segments.length)
        expect(now.items[0]!.metrics.valid_at).toBe("2026-07-15T10:00:00Z")
        const [filters] = (yield* sim.filters(id, {})).items
        expect(filters!.parent_substations).toEqual(["CP Cles", "CP Taio"])
        expect(filters!.extent_min_lng!).toBeLessThan(filters!.extent_max_lng!)
      })
    ))
})

describe("community energy", () => {
  it.effect("gives the REC participants 15-minute readings up to now only", () =>
    withSimulator((sim) =>
      Effect.gen(function*() {
        const readings = yield* sim.metersData(giulia.sub, {
          device_id: giuliaMeter,
          start: at("2026-07-14T00:00:00Z"),
          end: at("2026-07-16T00:00:00Z")
        })
        // 2026-07-14 whole day (96) plus 2026-07-15 until 10:15 (41 intervals ended by 10:20).
        expect(readings.count).toBe(96 + 41)
        expect(readings.items.at(-1)!.ts).toBe("2026-07-15T10:00:00Z")
        const night = readings.items.filter((r) => r.ts.slice(11, 13) === "01")
        expect(night.every((r) => r.production_kwh === 0 && r.consumption_kwh > 0)).toBe(true)
        const noon = readings.items.filter((r) => r.ts.startsWith("2026-07-14T10"))
        expect(noon.every((r) => r.production_kwh > 0.3)).toBe(true)
        const day = readings.items.filter((r) => r.ts.startsWith("2026-07-14"))
        const production = day.reduce((s, r) => s + r.production_kwh, 0)
        expect(production).toBeGreaterThan(10)
        expect(production).toBeLessThan(45)
        expect(readings.items[0]!.production_kw).toBeCloseTo(readings.items[0]!.production_kwh * 4, 3)
        expect((yield* Effect.flip(sim.metersData(giulia.sub, { device_id: "other", start: at("2026-07-14T00:00:00Z"), end: at("2026-07-15T00:00:00Z") })))._tag)
          .toBe("NotFound")
        expect((yield* Effect.flip(sim.profile("not-a-participant")))._tag).toBe("NotFound")
      })
    ))

  it.effect("splits shared energy among members in proportion to their import", () =>
    Effect.sync(() => {
      for (const iso of ["2026-07-14T10:00:00Z", "2026-07-14T20:00:00Z", "2026-01-10T12:15:00Z"]) {
        const slot = Date.parse(iso)
        const c = Energy.communitySlot("rec-platform", World.community, slot)
        const exports = c.readings.reduce((s, r) => s + Math.max(0, r.productionKwh - r.consumptionKwh), 0)
        const imports = c.readings.reduce((s, r) => s + Math.max(0, r.consumptionKwh - r.productionKwh), 0)
        const shared = c.virtualKwh.reduce((a, b) => a + b, 0)
        expect(shared).toBeCloseTo(Math.min(exports, imports), 9)
        expect(c.selfConsumptionKwh).toBeCloseTo(Math.min(c.productionKwh, c.consumptionKwh), 9)
        c.readings.forEach((r, i) => expect(c.virtualKwh[i]!).toBeLessThanOrEqual(Math.max(0, r.consumptionKwh - r.productionKwh) + 1e-12))
      }
    }))

  it.effect("aggregates the community hourly and daily from the members' readings", () =>
    withSimulator((sim) =>
      Effect.gen(function*() {
        const window = { start: at("2026-07-13T00:00:00Z"), end: at("2026-07-14T00:00:00Z") }
        const hourly = yield* sim.selfConsumption(World.community.id, window)
        expect(hourly.count).toBe(24)
        const daily = yield* sim.selfConsumptionDaily(World.community.id, window)
        expect(daily.count).toBe(1)
        const day = daily.items[0]!
        expect(day.total_production_kwh).toBeCloseTo(hourly.items.reduce((s, h) => s + h.total_production_kwh, 0), 1)
        expect(day.self_consumption_kwh).toBeLessThanOrEqual(Math.min(day.total_production_kwh, day.total_consumption_kwh))
        expect(day.self_consumption_rate!).toBeGreaterThan(0)
        let members = 0
        for (const p of World.community.participants) {
          const meter = World.meterSensorId(p)
          const r = yield* sim.metersData(p.sub, { device_id: meter, ...window })
          members += r.items.reduce((s, x) => s + x.consumption_kwh, 0)
        }
        expect(day.total_consumption_kwh).toBeCloseTo(members, 1)
        const virtual = yield* sim.virtualConsumption(giulia.sub, window)
        expect(virtual.count).toBe(96)
        expect(virtual.items.every((v) => v.virtual_consumption_kwh <= v.consumption_kwh + 1e-9)).toBe(true)
      })
    ))

  it.effect("offers flexibility windows in the future, best first, and a bounded forecast", () =>
    withSimulator((sim) =>
      Effect.gen(function*() {
        const windows = yield* sim.flexibilityWindows(giulia.sub, { device_id: giuliaMeter })
        expect(windows.count).toBeGreaterThan(0)
        expect(windows.count).toBeLessThanOrEqual(20)
        expect(windows.items.every((w) => Date.parse(w.window_end) > now)).toBe(true)
        const estimates = windows.items.map((w) => w.estimated_kwh)
        expect(estimates).toEqual([...estimates].sort((a, b) => b - a))
        for (const w of windows.items) {
          expect(w.reward_points_estimated).toBe(Math.round(w.estimated_kwh * 10))
          expect(w.community_kwh).toBeGreaterThan(0)
        }
        const forecast = yield* sim.forecast(World.community.id, { start: at("2026-07-15T10:20:00Z"), end: at("2026-07-18T00:00:00Z") })
        expect(forecast.count).toBe(48)
        expect(forecast.items[0]!.datetime).toBe("2026-07-15 11:00:00+00:00")
        expect(forecast.items.every((f) => f.lower <= f.prediction && f.prediction <= f.upper)).toBe(true)
        const settlement = yield* sim.settlement(World.community.id, {
          device_id: giuliaMeter,
          window_start: at("2026-07-14T17:00:00Z"),
          window_end: at("2026-07-14T21:00:00Z")
        })
        expect(settlement.items.map((s) => s.ts)).toEqual(
          ["17", "18", "19", "20"].map((h) => `2026-07-14T${h}:00:00Z`)
        )
      })
    ))
})

describe("payload schemas", () => {
  const decode = <A, I>(schema: Schema.Schema<A, I>, input: unknown) => Schema.decodeUnknownEither(schema)(input)

  it("reject unknown keys, bad dates, inverted and oversized windows", () => {
    expect(Either.isRight(decode(GridSchemas.RisksPayload, { dates: ["2026-07-15"], limit: 10 }))).toBe(true)
    expect(Either.isLeft(decode(GridSchemas.RisksPayload, { dates: ["2026-07-15"], extra: true }))).toBe(true)
    expect(Either.isLeft(decode(GridSchemas.RisksPayload, { dates: [] }))).toBe(true)
    expect(Either.isLeft(decode(GridSchemas.RisksPayload, { dates: ["2026-02-30"] }))).toBe(true)
    expect(Either.isLeft(decode(GridSchemas.RisksPayload, { dates: ["2026-07-15"], risk_vector: "fire" }))).toBe(true)
    expect(Either.isLeft(decode(GridSchemas.TrendlinePayload, { date_from: "2026-07-16", date_to: "2026-07-15" }))).toBe(true)
    expect(Either.isLeft(decode(GridSchemas.ShapesPayload, { tile_ids: ["3_5"] }))).toBe(true)
    expect(Either.isLeft(decode(GridSchemas.ShapesPayload, { limit: 0 }))).toBe(true)
    const window = (start: string, end: string) => ({ device_id: "d", start, end })
    expect(Either.isRight(decode(EnergySchemas.MetersDataPayload, window("2026-07-14T00:00:00+02:00", "2026-07-15T00:00:00Z")))).toBe(true)
    expect(Either.isLeft(decode(EnergySchemas.MetersDataPayload, window("2026-07-14T00:00:00", "2026-07-15T00:00:00Z")))).toBe(true)
    expect(Either.isLeft(decode(EnergySchemas.MetersDataPayload, window("2026-07-15T00:00:00Z", "2026-07-14T00:00:00Z")))).toBe(true)
    expect(Either.isLeft(decode(EnergySchemas.MetersDataPayload, window("2024-01-01T00:00:00Z", "2026-01-01T00:00:00Z")))).toBe(true)
  })

  it("keep the time helpers honest about Italian civil time", () => {
    expect(Time.italyOffsetHours(Date.parse("2026-01-15T12:00:00Z"))).toBe(1)
    expect(Time.italyOffsetHours(Date.parse("2026-07-15T12:00:00Z"))).toBe(2)
    expect(Time.italyOffsetHours(Date.parse("2026-03-29T00:59:00Z"))).toBe(1)
    expect(Time.italyOffsetHours(Date.parse("2026-03-29T01:00:00Z"))).toBe(2)
    expect(Time.italyOffsetHours(Date.parse("2026-10-25T01:00:00Z"))).toBe(1)
  })
})
