/**
 * The simulated community's energy: 15-minute PV production and consumption per participant,
 * and what the community derives from them. Pure functions of (seed, participant, instant).
 *
 * - PV: clear-sky output from the sun's elevation at the community's location (about 0.8 kW
 *   per kWp at a summer noon), times the day's clearness (shared by all members: same sky),
 *   times a little within-day variation.
 * - Consumption: the yearly total spread over a daily profile in Italian civil time
 *   (household: morning and evening peaks; bakery: night and morning), more in winter, more
 *   at weekends for households, with ±20% noise per interval.
 * - Community, per interval: on-site self-consumption min(P, C) per member, then the shared
 *   energy the Italian REC scheme rewards, min(Σ export, Σ import); their sum is
 *   min(ΣP, ΣC), the community's self-consumption. A member's virtual consumption is its
 *   share of the shared energy, in proportion to its import.
 */
import * as Random from "./Random.js"
import * as Time from "./Time.js"
import type { CommunitySpec, ParticipantSpec } from "./World.js"

/** Where the community's panels are (Arco, lake Garda). */
const site = { lat: 45.918, lon: 10.887 }

const rad = Math.PI / 180

/** Sine of the sun's elevation at an instant (negative at night). */
export const sunSine = (ms: number): number => {
  const doy = Time.dayOfYear(ms)
  const declination = 23.44 * rad * Math.sin((2 * Math.PI * (284 + doy)) / 365)
  const b = (2 * Math.PI * (doy - 81)) / 364
  const equationOfTime = 9.87 * Math.sin(2 * b) - 7.53 * Math.cos(b) - 1.5 * Math.sin(b)
  const utcHours = (ms % Time.dayMs) / Time.hourMs
  const solarHours = utcHours + site.lon / 15 + equationOfTime / 60
  const hourAngle = 15 * (solarHours - 12) * rad
  const lat = site.lat * rad
  return Math.sin(lat) * Math.sin(declination) + Math.cos(lat) * Math.cos(declination) * Math.cos(hourAngle)
}

/** Clearness of a day's sky, 0.3 (overcast) to 1 (clear), shared by the community. */
export const clearness = (seed: string, community: CommunitySpec, date: string): number => {
  const u = Random.unit(seed, community.id, "sky", date)
  return 0.3 + 0.7 * Math.sqrt(u)
}

/** PV power per kWp at an instant (kW/kWp), without the within-day noise. */
export const pvPerKwp = (seed: string, community: CommunitySpec, ms: number): number => {
  const sine = sunSine(ms)
  if (sine <= 0) return 0
  return 0.82 * sine ** 1.15 * clearness(seed, community, Time.isoDate(ms))
}

const householdProfile = [
  0.45, 0.45, 0.45, 0.45, 0.45, 0.45, 0.7, 1.2, 1.1, 0.8, 0.8, 0.8,
  1.0, 1.0, 0.75, 0.75, 0.75, 1.0, 1.4, 1.8, 1.8, 1.5, 1.0, 0.7
]
const bakeryProfile = [
  0.5, 0.5, 2.2, 2.4, 2.4, 2.3, 2.1, 1.8, 1.6, 1.4, 1.1, 0.9,
  0.6, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5
]
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
const profiles = {
  household: householdProfile.map((x) => x / mean(householdProfile)),
  bakery: bakeryProfile.map((x) => x / mean(bakeryProfile))
}

/** Expected consumption power at an instant (kW), without noise. */
export const expectedLoadKw = (participant: ParticipantSpec, ms: number): number => {
  if (participant.annualConsumptionKwh === 0) return 0
  const local = ms + Time.italyOffsetHours(ms) * Time.hourMs
  const hour = new Date(local).getUTCHours()
  const weekday = new Date(local).getUTCDay()
  const seasonal = 1 + 0.18 * Math.cos((2 * Math.PI * (Time.dayOfYear(ms) - 15)) / 365)
  const weekly = participant.loadProfile === "bakery"
    ? (weekday === 0 ? 0.4 : 1.05)
    : (weekday === 0 || weekday === 6 ? 1.12 : 0.95)
  return (participant.annualConsumptionKwh / 8760) * profiles[participant.loadProfile][hour]! * seasonal * weekly
}

export interface SlotReading {
  readonly productionKwh: number
  readonly consumptionKwh: number
}

/** A participant's energy over the 15 minutes starting at `slotStart`. */
export const slotReading = (seed: string, community: CommunitySpec, participant: ParticipantSpec, slotStart: number): SlotReading => {
  const middle = slotStart + Time.slotMs / 2
  const pv = participant.pvKwp * pvPerKwp(seed, community, middle) *
    Random.between(0.85, 1, seed, community.id, "sky-slot", slotStart)
  const load = expectedLoadKw(participant, middle) * Random.between(0.8, 1.2, seed, participant.sub, "load", slotStart)
  return { productionKwh: Random.round(pv * 0.25, 4), consumptionKwh: Random.round(load * 0.25, 4) }
}

export interface CommunitySlot {
  readonly readings: ReadonlyArray<SlotReading>
  readonly productionKwh: number
  readonly consumptionKwh: number
  /** min(ΣP, ΣC): energy the community produced and consumed itself. */
  readonly selfConsumptionKwh: number
  /** Per member (same order as the community's participants): share of the shared energy. */
  readonly virtualKwh: ReadonlyArray<number>
}

export const communitySlot = (seed: string, community: CommunitySpec, slotStart: number): CommunitySlot => {
  const readings = community.participants.map((p) => slotReading(seed, community, p, slotStart))
  const production = readings.reduce((sum, r) => sum + r.productionKwh, 0)
  const consumption = readings.reduce((sum, r) => sum + r.consumptionKwh, 0)
  const exports = readings.map((r) => Math.max(0, r.productionKwh - r.consumptionKwh))
  const imports = readings.map((r) => Math.max(0, r.consumptionKwh - r.productionKwh))
  const totalImport = imports.reduce((a, b) => a + b, 0)
  const shared = Math.min(exports.reduce((a, b) => a + b, 0), totalImport)
  return {
    readings,
    productionKwh: production,
    consumptionKwh: consumption,
    selfConsumptionKwh: Math.min(production, consumption),
    virtualKwh: imports.map((i) => (totalImport > 0 ? (shared * i) / totalImport : 0))
  }
}

/** Interval starts in [start, end), aligned to `step`, of intervals that have ended by `now`. */
export const pastSlots = (start: number, end: number, now: number, step = Time.slotMs): Array<number> => {
  const slots: Array<number> = []
  for (let t = Time.ceilTo(start, step); t < end && t + step <= now; t += step) slots.push(t)
  return slots
}

/** Expected community surplus (production - consumption, kWh) over the hour starting at `hourStart`. */
export const expectedSurplusKwh = (seed: string, community: CommunitySpec, hourStart: number): number => {
  let surplus = 0
  for (let q = 0; q < 4; q++) {
    const middle = hourStart + q * Time.slotMs + Time.slotMs / 2
    for (const p of community.participants) {
      surplus += (p.pvKwp * pvPerKwp(seed, community, middle) * 0.925 - expectedLoadKw(p, middle)) * 0.25
    }
  }
  return surplus
}
