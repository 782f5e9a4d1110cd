/**
 * The simulated distribution networks: topology (primary substations, medium-voltage feeders
 * made of segments, secondary substations, map tiles) generated from the seed, and daily wind
 * and heat risk per segment from a small weather model. Pure functions of (seed, network,
 * date), so a date's risk is the same whichever day it is asked on.
 *
 * Weather model, per network and day:
 * - regional peak gust: two slow waves (periods of 5.3 and 8.9 days) with seeded phases plus
 *   noise, scaled by the network's windiness; a segment's gust scales with its exposure
 *   (elevation, woodland). Gust excess = gust - design gust of the conductor (bare 20 m/s,
 *   insulated 23 m/s, 3 m/s less in woodland where trees fall on lines); WARNING from 0,
 *   ALERT from 3 m/s of excess.
 * - daily maximum temperature: a seasonal curve, a lapse rate of 6.5 °C/km and heat-wave
 *   anomalies (period 11.3 days). Underground cables are at risk when the maximum exceeds the
 *   season's 90th percentile (WARNING), by 2 °C on the second day in a row or later (ALERT).
 */
import type { KnownConductorType, KnownRiskLevel, RiskVector } from "../GridSchemas.js"
import * as Random from "./Random.js"
import * as Time from "./Time.js"
import type { Municipality, NetworkSpec, OperationalUnit } from "./World.js"

export interface Segment {
  readonly id: string
  readonly feederId: string
  readonly lineName: string
  readonly primaryName: string
  readonly conductor: KnownConductorType
  readonly municipality: string
  readonly operationalUnit: string
  readonly coordinates: ReadonlyArray<readonly [number, number]>
  readonly lengthM: number
  readonly elevationStart: number
  readonly elevationEnd: number
  readonly vegetated: boolean
  /** Multiplies the regional gust at this segment. */
  readonly exposure: number
  /** Added to the air temperature around a cable (urban heat island, soil, load), °C. */
  readonly heatOffset: number
  readonly tile: { readonly x: number; readonly y: number }
  readonly strike: { readonly tier: "low" | "medium" | "high"; readonly multiplier: number; readonly densityPerKm: number } | null
}

export interface SecondarySubstation {
  readonly assetId: string
  readonly name: string
  readonly labelId: string
  readonly label: string
  readonly lineName: string
  readonly feederId: string
  readonly primaryName: string
  readonly operationalUnit: string
  readonly municipality: string
  readonly at: readonly [number, number]
}

export interface PrimarySubstation {
  readonly code: string
  readonly name: string
  readonly at: readonly [number, number]
}

export interface Tile {
  readonly id: string
  readonly x: number
  readonly y: number
  /** [minLon, minLat, maxLon, maxLat] */
  readonly bbox: readonly [number, number, number, number]
  readonly segments: number
}

export interface NetworkModel {
  readonly spec: NetworkSpec
  readonly primaries: ReadonlyArray<PrimarySubstation>
  readonly segments: ReadonlyArray<Segment>
  readonly secondaries: ReadonlyArray<SecondarySubstation>
  readonly tiles: ReadonlyArray<Tile>
  /** [minLon, minLat, maxLon, maxLat] of every segment. */
  readonly extent: readonly [number, number, number, number]
}

export const tileWidthDeg = 0.02
export const tileHeightDeg = 0.015

const metresPerDegLat = 111_320
const streets = [
  "Via Roma", "Via Garibaldi", "Via Mazzini", "Via Dante", "Viale Trento", "Via dei Molini", "Via San Nazzaro",
  "Via Brione", "Via Lungolago", "Via della Stazione", "Via Belvedere", "Via ai Campi", "Via delle Vigne",
  "Via Santa Maria", "Via dei Pini", "Localita' Maso Nuovo"
]

const distanceM = (a: readonly [number, number], b: readonly [number, number]) => {
  const lat = ((a[1] + b[1]) / 2) * Math.PI / 180
  const dx = (b[0] - a[0]) * metresPerDegLat * Math.cos(lat)
  const dy = (b[1] - a[1]) * metresPerDegLat
  return Math.sqrt(dx * dx + dy * dy)
}

const move = (from: readonly [number, number], metres: number, heading: number): readonly [number, number] => {
  const lat = from[1] * Math.PI / 180
  return [
    from[0] + (metres * Math.sin(heading)) / (metresPerDegLat * Math.cos(lat)),
    from[1] + (metres * Math.cos(heading)) / metresPerDegLat
  ]
}

const round6 = (p: readonly [number, number]): readonly [number, number] => [Random.round(p[0], 6), Random.round(p[1], 6)]

/** Builds a network's topology from the seed. */
export const buildNetwork = (seed: string, spec: NetworkSpec): NetworkModel => {
  const towns: ReadonlyArray<{ readonly town: Municipality; readonly unit: OperationalUnit }> = spec.operationalUnits.flatMap(
    (unit) => unit.municipalities.map((town) => ({ town, unit }))
  )
  const nearest = (p: readonly [number, number]) =>
    towns.reduce((best, t) => (distanceM(p, t.town.at) < distanceM(p, best.town.at) ? t : best))
  const segments: Array<Omit<Segment, "tile">> = []
  const secondaries: Array<SecondarySubstation> = []
  const primaries: Array<PrimarySubstation> = []
  let cabin = 0
  for (const ps of spec.primarySubstations) {
    const rng = Random.sequence(seed, spec.id, ps.code)
    const home = towns.find((t) => t.town.name === ps.municipality)!
    const psAt = round6(move(home.town.at, rng.between(150, 450), rng.between(0, 2 * Math.PI)))
    primaries.push({ code: ps.code, name: ps.name, at: psAt })
    const shortName = ps.name.replace(/^CP /, "")
    for (let f = 1; f <= ps.feeders; f++) {
      const feederId = `${spec.prefix}-${ps.code}-F${f}`
      const lineName = `${shortName} ${String(f).padStart(2, "0")}`
      let heading = (2 * Math.PI * (f - 1)) / ps.feeders + rng.between(-0.4, 0.4)
      let at = psAt
      let elevation = home.town.elevation
      const count = rng.int(8, 15)
      const urban = rng.int(1, 3)
      let nextCabin = rng.int(1, 3)
      for (let s = 1; s <= count; s++) {
        const length = rng.between(250, 800)
        heading += rng.between(-0.45, 0.45)
        const points: Array<readonly [number, number]> = [at]
        const bends = rng.int(0, 2)
        for (let b = 1; b <= bends; b++) points.push(round6(move(at, (length * b) / (bends + 1), heading + rng.between(-0.25, 0.25))))
        const end = round6(move(at, length, heading))
        points.push(end)
        const mid = points[Math.floor(points.length / 2)]!
        const place = nearest(mid)
        const fromTown = distanceM(mid, place.town.at)
        const underground = s <= urban || (fromTown < 900 && rng.chance(0.5)) || rng.chance(0.08)
        const conductor: KnownConductorType = underground
          ? "underground_cable"
          : rng.chance(0.45)
          ? "overhead_insulated"
          : "overhead_bare"
        const elevationStart = elevation
        elevation = Math.max(65, elevation + rng.between(-20, 55) * (fromTown > 1500 ? 1.4 : 0.6))
        const overhead = conductor !== "underground_cable"
        const vegetated = overhead && rng.chance(elevation > 300 ? 0.55 : 0.2)
        const tier = !vegetated ? null : elevation > 600 ? "high" : rng.chance(0.5) ? "medium" : "low"
        segments.push({
          id: `${feederId}-S${String(s).padStart(2, "0")}`,
          feederId,
          lineName,
          primaryName: ps.name,
          conductor,
          municipality: place.town.name,
          operationalUnit: place.unit.name,
          coordinates: points,
          lengthM: Random.round(points.slice(1).reduce((sum, p, i) => sum + distanceM(points[i]!, p), 0), 1),
          elevationStart: Math.round(elevationStart),
          elevationEnd: Math.round(elevation),
          vegetated,
          exposure: 0.85 + 0.35 * Math.min(1, (elevation - 65) / 900) + (vegetated ? 0.05 : 0) + rng.between(-0.08, 0.08),
          heatOffset: fromTown < 900 ? rng.between(0.5, 2.2) : rng.between(-1.5, 0.5),
          strike: tier === null ? null : {
            tier,
            multiplier: Random.round(tier === "high" ? rng.between(1.8, 2.5) : tier === "medium" ? rng.between(1.3, 1.8) : rng.between(1, 1.3)),
            densityPerKm: Random.round(rng.between(2, 14), 1)
          }
        })
        if (s === nextCabin) {
          cabin += 1
          const street = streets[Random.hash32(seed, spec.id, "street", cabin) % streets.length]!
          secondaries.push({
            assetId: `${spec.prefix}-CS-${String(cabin).padStart(4, "0")}`,
            name: `CS ${place.town.name} ${String(cabin).padStart(3, "0")}`,
            labelId: `L${String(cabin).padStart(4, "0")}`,
            label: `Cabina ${street}`,
            lineName,
            feederId,
            primaryName: ps.name,
            operationalUnit: place.unit.name,
            municipality: place.town.name,
            at: end
          })
          nextCabin += rng.int(2, 4)
        }
        at = end
      }
    }
  }
  const lons = segments.flatMap((s) => s.coordinates.map((p) => p[0]))
  const lats = segments.flatMap((s) => s.coordinates.map((p) => p[1]))
  const extent = [Math.min(...lons), Math.min(...lats), Math.max(...lons), Math.max(...lats)] as const
  const originLon = Math.floor(extent[0] / tileWidthDeg) * tileWidthDeg
  const originLat = Math.floor(extent[1] / tileHeightDeg) * tileHeightDeg
  const tileOf = (p: readonly [number, number]) => ({
    x: Math.floor((p[0] - originLon) / tileWidthDeg),
    y: Math.floor((p[1] - originLat) / tileHeightDeg)
  })
  const withTiles = segments.map((s): Segment => ({ ...s, tile: tileOf(s.coordinates[Math.floor(s.coordinates.length / 2)]!) }))
  const counts = new Map<string, { x: number; y: number; n: number }>()
  for (const s of withTiles) {
    const key = `tile_${s.tile.x}_${s.tile.y}`
    const entry = counts.get(key) ?? { x: s.tile.x, y: s.tile.y, n: 0 }
    entry.n += 1
    counts.set(key, entry)
  }
  const tiles = [...counts.entries()]
    .map(([id, t]): Tile => ({
      id,
      x: t.x,
      y: t.y,
      segments: t.n,
      bbox: [
        Random.round(originLon + t.x * tileWidthDeg, 6),
        Random.round(originLat + t.y * tileHeightDeg, 6),
        Random.round(originLon + (t.x + 1) * tileWidthDeg, 6),
        Random.round(originLat + (t.y + 1) * tileHeightDeg, 6)
      ]
    }))
    .sort((a, b) => a.y - b.y || a.x - b.x)
  return { spec, primaries, segments: withTiles, secondaries, tiles, extent }
}

// --- weather and risk ------------------------------------------------------------------

export const riskColors: Record<KnownRiskLevel, string> = { LOW: "#1a9641", WARNING: "#fdae61", ALERT: "#d7191c" }

const wave = (day: number, period: number, phase: number) => Math.sin((2 * Math.PI * day) / period + phase)

/** Regional daily peak gust at exposure 1 (m/s). */
export const regionalGust = (seed: string, spec: NetworkSpec, date: string): number => {
  const d = Time.dayNumber(date)
  const p1 = 2 * Math.PI * Random.unit(seed, spec.id, "wind-phase-1")
  const p2 = 2 * Math.PI * Random.unit(seed, spec.id, "wind-phase-2")
  return spec.windiness * (
    8.5 +
    8 * Math.max(0, wave(d, 5.3, p1)) ** 1.5 +
    5 * Math.max(0, wave(d, 8.9, p2)) +
    Random.between(-1.5, 1.5, seed, spec.id, "gust", date)
  )
}

const designGust = (segment: Segment) =>
  (segment.conductor === "overhead_bare" ? 20 : 23) - (segment.vegetated ? 3 : 0)

const windLevel = (excess: number): KnownRiskLevel => (excess >= 3 ? "ALERT" : excess >= 0 ? "WARNING" : "LOW")

export interface WindRisk {
  readonly level: KnownRiskLevel
  readonly gustMax: number
  readonly speedMax: number
  readonly gustExcess: number
}

export const windRisk = (segment: Segment, regional: number, factor = 1): WindRisk => {
  const gust = regional * segment.exposure * factor
  const excess = gust - designGust(segment)
  return {
    level: windLevel(excess),
    gustMax: Random.round(gust, 1),
    speedMax: Random.round(gust * 0.58, 1),
    gustExcess: Random.round(excess, 2)
  }
}

/** Seasonal daily maximum at 100 m (°C). */
const seasonalMax = (date: string) => 16.5 + 12.5 * Math.sin((2 * Math.PI * (Time.dayOfYear(Time.dateStart(date)) - 105)) / 365)

const lapse = (elevation: number) => 0.0065 * (elevation - 100)

/** Daily maximum air temperature at an elevation (°C). */
export const dailyMaxTemp = (seed: string, spec: NetworkSpec, date: string, elevation: number): number => {
  const d = Time.dayNumber(date)
  const p3 = 2 * Math.PI * Random.unit(seed, spec.id, "heat-phase-1")
  const p4 = 2 * Math.PI * Random.unit(seed, spec.id, "heat-phase-2")
  const anomaly = 5.5 * Math.max(0, wave(d, 11.3, p3)) ** 2 + 1.5 * wave(d, 4.1, p4) +
    Random.between(-1, 1, seed, spec.id, "temp", date)
  return seasonalMax(date) - lapse(elevation) + anomaly
}

/** The 90th percentile of the season's daily maxima at an elevation (°C). */
export const p90Threshold = (date: string, elevation: number): number => seasonalMax(date) - lapse(elevation) + 3.2

/** Above the 90th percentile: WARNING; by 2 °C on the second hot day in a row or later: ALERT. */
export const heatLevel = (temp: number, p90: number, consecutiveDays: number): KnownRiskLevel =>
  temp > p90 + 2 && consecutiveDays >= 2 ? "ALERT" : temp > p90 ? "WARNING" : "LOW"

export interface HeatRisk {
  readonly level: KnownRiskLevel
  readonly tempMax: number
  readonly p90: number
  readonly consecutiveDays: number
}

export const segmentElevation = (segment: Segment) => (segment.elevationStart + segment.elevationEnd) / 2

/** A cable's daily maximum temperature (°C): the air's at its elevation plus its own offset. */
export const segmentMaxTemp = (seed: string, spec: NetworkSpec, segment: Segment, date: string): number =>
  dailyMaxTemp(seed, spec, date, segmentElevation(segment)) + segment.heatOffset

export const heatRisk = (seed: string, spec: NetworkSpec, segment: Segment, date: string): HeatRisk => {
  const elevation = segmentElevation(segment)
  const temp = segmentMaxTemp(seed, spec, segment, date)
  const p90 = p90Threshold(date, elevation)
  let consecutive = 0
  for (let back = 0; back < 14; back++) {
    const day = Time.addDays(date, -back)
    if (segmentMaxTemp(seed, spec, segment, day) > p90Threshold(day, elevation)) consecutive += 1
    else break
  }
  const level = heatLevel(temp, p90, consecutive)
  return { level, tempMax: Random.round(temp, 1), p90: Random.round(p90, 1), consecutiveDays: consecutive }
}

export const altitudeBand = (elevation: number): string =>
  elevation < 300 ? "0-300 m" : elevation < 600 ? "300-600 m" : elevation < 1000 ? "600-1000 m" : "1000+ m"

export const isOverhead = (segment: Segment) => segment.conductor !== "underground_cable"

/** Which hazard applies to a segment: wind to overhead conductors, heat to cables. */
export const vectorOf = (segment: Segment): RiskVector => (isOverhead(segment) ? "wind" : "heat")

/** Afternoon peak of the lake and valley winds (Italian civil hour). */
export const windDiurnal = (localHour: number) =>
  localHour >= 8 && localHour <= 20 ? 0.6 + 0.4 * Math.sin((Math.PI * (localHour - 8)) / 12) : 0.6

/** Temperature below the daily maximum at a local hour (°C). */
export const heatDiurnalDrop = (localHour: number) => 9 * (1 - Math.max(0, Math.cos((Math.PI * (localHour - 15)) / 12)))
