/**
 * The community energy overview of a month (spec 001 part C: `production_kwh`,
 * `consumption_kwh`, `shared_kwh`, `incentive_eur`), aggregated from the digital twin with the
 * caller's token:
 *
 * 1. the participant profile gives the community (no membership: 404), and at the same time the
 *    assets give the meter: the first asset with a `sensor_id` (as the original gateway chose it);
 * 2. as soon as the assets answer (the profile may still be on its way), the meter's 15-minute
 *    readings (`meters_data`) over the month are summed into production and consumption, and
 *    its share of the community's shared energy (`rec_virtual_consumption_per_device_15m`,
 *    `virtual_consumption_kwh`) into `shared_kwh`;
 * 3. `incentive_eur` = `shared_kwh` x the community's tariff (`INCENTIVE_TARIFFS`, else
 *    `INCENTIVE_TARIFF_EUR_PER_KWH`, default 0.11 EUR/kWh), to the cent.
 *
 * Energies are rounded to the watt-hour (3 decimals) and the incentive is computed from the
 * rounded `shared_kwh`, so the figures a user sees multiply out.
 *
 * The digital twin has readings only for intervals that have ended, so the figures of a month
 * change only when a quarter hour ends: they cover the month up to the last quarter hour that
 * ended (`to`). An overview is therefore reused for the same user, month and `to` for
 * `OVERVIEW_CACHE_TTL` (60 s): a page refreshed or opened in several tabs asks the digital twin
 * once (a month is about 5,000 readings to fetch and check). The cache is in the process, per
 * user (keyed by the verified subject), and only ever saves work: replicas keep their own.
 */
import { ExpiringLru, HttpErrors, type Upstream } from "@rec/platform"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type { Caller } from "./Access.js"
import { TwinClient } from "./Clients.js"
import * as Config from "./Config.js"
import type * as Domain from "./Domain.js"
import { Membership } from "./Membership.js"
import * as Period from "./Period.js"

const round3 = (n: number) => Math.round(n * 1000) / 1000
const round2 = (n: number) => Math.round(n * 100) / 100

const quarterHour = 15 * 60_000

/** The end of the last quarter hour that has ended at `now` (every zone's offset is whole quarter hours). */
export const lastQuarterHour = (now: DateTime.Utc): DateTime.Utc =>
  DateTime.unsafeMake(Math.floor(DateTime.toEpochMillis(now) / quarterHour) * quarterHour)

interface Cached extends ExpiringLru.Expiring {
  readonly overview: Domain.Overview
}

export type OverviewError = Upstream.UpstreamFailure | HttpErrors.NotFound | HttpErrors.BadRequest

export class Overview extends Effect.Service<Overview>()("participant-gateway/Overview", {
  effect: Effect.gen(function*() {
    const twin = yield* TwinClient
    const membership = yield* Membership
    const settings = yield* Config.overview

    const tariffOf = (community: string) => settings.tariffs.get(community) ?? settings.defaultTariff
    const ttl = Duration.toMillis(settings.cacheTtl)
    const cache = ttl > 0 && settings.cacheSize > 0 ? new ExpiringLru.ExpiringLru<Cached>(settings.cacheSize) : undefined

    /** The meter (the first asset with a `sensor_id`) and its totals over `[start, to)`. */
    const totalsOf = (caller: Caller, start: DateTime.Utc, to: DateTime.Utc) =>
      Effect.gen(function*() {
        const assets = yield* twin.assets(caller.token, caller.subject.id)
        const deviceId = assets.items.find((asset) => asset.sensor_id !== null)?.sensor_id ?? null
        // A month that began this very millisecond has no interval to ask about yet.
        if (deviceId === null || !DateTime.greaterThan(to, start)) {
          return { deviceId, production: 0, consumption: 0, shared: 0 }
        }
        const payload = { device_id: deviceId, start, end: to }
        // Totals, not rows: the digital twin's client sums each answer while checking it, so a
        // month's thousands of rows never outlive their decoding (docs/performance.md).
        const [readings, virtual] = yield* Effect.all([
          twin.meterTotals(caller.token, caller.subject.id, payload),
          twin.sharedTotals(caller.token, caller.subject.id, payload)
        ], { concurrency: 2 })
        return {
          deviceId,
          production: readings.production_kwh,
          consumption: readings.consumption_kwh,
          shared: virtual.virtual_consumption_kwh
        }
      })

    const get = Effect.fn("Overview.get")(function*(caller: Caller, requested: Option.Option<string>) {
      const now = yield* DateTime.now
      const period = Option.getOrElse(requested, () => Period.current(now, settings.timeZone))
      const window = Period.window(period, settings.timeZone)
      if (DateTime.greaterThan(window.start, now)) {
        return yield* Effect.fail(new HttpErrors.BadRequest({ detail: `The period ${period} has not begun yet` }))
      }
      const to = DateTime.min(window.end, lastQuarterHour(now))
      const key = `${caller.subject.id}\u0000${period}\u0000${DateTime.toEpochMillis(to)}`
      const cached = cache?.get(key)
      if (cached !== undefined) return cached.overview

      // The readings depend on the meter only, not on the membership: they are asked for as soon
      // as the assets answer, while the profile is still on its way (the profile, assets, then
      // readings in sequence would wait for the slower of the first two). The membership still
      // decides first: its failure, then no membership (404, the readings interrupted), then the
      // assets' or readings' failure.
      const readings = yield* Effect.fork(totalsOf(caller, window.start, to))
      const community = yield* Effect.onError(membership.communityOf(caller), () => Fiber.interrupt(readings))
      if (Option.isNone(community)) {
        yield* Fiber.interrupt(readings)
        return yield* Effect.fail(
          new HttpErrors.NotFound({
            detail: "You are not a member of an energy community, so there is no community overview for you"
          })
        )
      }
      const { deviceId, production, consumption, shared } = yield* Fiber.join(readings)

      const tariff = tariffOf(community.value.key)
      const sharedKwh = round3(shared)
      const overview: Domain.Overview = {
        community_id: community.value.key,
        community_name: community.value.name,
        period,
        production_kwh: round3(production),
        consumption_kwh: round3(consumption),
        shared_kwh: sharedKwh,
        incentive_eur: round2(sharedKwh * tariff),
        incentive_tariff_eur_per_kwh: tariff,
        device_id: deviceId,
        from: DateTime.formatIso(window.start),
        to: DateTime.formatIso(to),
        time_zone: DateTime.zoneToString(settings.timeZone)
      }
      cache?.set(key, { overview, expiresAt: DateTime.toEpochMillis(now) + ttl })
      return overview
    })

    return { get }
  })
}) {}
