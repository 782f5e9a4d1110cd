/**
 * The simulator's handlers: check access, then ask the `Simulator`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Layer } from "effect"
import { DigitalTwinApi } from "../Api.js"
import { communityFetchers, participantFetchers } from "../EnergySchemas.js"
import { UnknownFetcher } from "../Errors.js"
import { gridFetchers } from "../GridSchemas.js"
import * as Access from "./Access.js"
import { Simulator } from "./Simulator.js"

/** Any other fetcher id: 404 NotFound when the entity does not exist (`exists` fails), else UnknownFetcher. */
const unknownFetcher = <E, R>(
  exists: Effect.Effect<unknown, E, R>,
  fetcher: string,
  entity: string,
  known: Record<string, number>
) =>
  Effect.zipRight(
    exists,
    Effect.fail(
      new UnknownFetcher({
        fetcher,
        available: Object.keys(known),
        detail: `Unknown values fetcher '${fetcher}' for ${entity}; available: ${Object.keys(known).join(", ")}`
      })
    )
  )

export const GridLive = HttpApiBuilder.group(DigitalTwinApi, "grid", (handlers) =>
  Effect.gen(function*() {
    const sim = yield* Simulator
    const guard = <A, E, R>(networkId: string, answer: Effect.Effect<A, E, R>) =>
      Effect.zipRight(Access.network(networkId), answer)
    return handlers
      .handle("wind_map", ({ path, urlParams }) => guard(path.network_id, sim.windMap(path.network_id, urlParams)))
      .handle("wind_bosco", ({ path, urlParams }) => guard(path.network_id, sim.windBosco(path.network_id, urlParams)))
      .handle("wind_alert_distribution", ({ path, urlParams }) =>
        guard(path.network_id, sim.windAlertDistribution(path.network_id, urlParams)))
      .handle("wind_trend", ({ path }) => guard(path.network_id, sim.windTrend(path.network_id)))
      .handle("heat_map", ({ path, urlParams }) => guard(path.network_id, sim.heatMap(path.network_id, urlParams)))
      .handle("heat_alert_distribution", ({ path, urlParams }) =>
        guard(path.network_id, sim.heatAlertDistribution(path.network_id, urlParams)))
      .handle("heat_trend", ({ path }) => guard(path.network_id, sim.heatTrend(path.network_id)))
      .handle("substations_map", ({ path }) => guard(path.network_id, sim.substationsMap(path.network_id)))
      .handle("summary", ({ path }) => guard(path.network_id, sim.summary(path.network_id)))
      .handle("filters", ({ path, payload }) => guard(path.network_id, sim.filters(path.network_id, payload.payload)))
      .handle("tile_index", ({ path, payload }) => guard(path.network_id, sim.tileIndex(path.network_id, payload.payload)))
      .handle("shapes", ({ path, payload }) => guard(path.network_id, sim.shapes(path.network_id, payload.payload)))
      .handle("risks", ({ path, payload }) => guard(path.network_id, sim.risks(path.network_id, payload.payload)))
      .handle("risks_now", ({ path, payload }) => guard(path.network_id, sim.risksNow(path.network_id, payload.payload)))
      .handle("trendline", ({ path, payload }) => guard(path.network_id, sim.trendline(path.network_id, payload.payload)))
      .handle("unknown_fetcher", ({ path }) =>
        guard(
          path.network_id,
          unknownFetcher(sim.network(path.network_id), path.fetcher, `network '${path.network_id}'`, gridFetchers)
        ))
  }))

export const ParticipantsLive = HttpApiBuilder.group(DigitalTwinApi, "participants", (handlers) =>
  Effect.gen(function*() {
    const sim = yield* Simulator
    const guard = <A, E, R>(sub: string, answer: Effect.Effect<A, E, R>) => Effect.zipRight(Access.participant(sub), answer)
    return handlers
      .handle("profile", ({ path }) => guard(path.sub, sim.profile(path.sub)))
      .handle("assets", ({ path }) => guard(path.sub, sim.assets(path.sub)))
      .handle("meters_data", ({ path, payload }) => guard(path.sub, sim.metersData(path.sub, payload.payload)))
      .handle("rec_virtual_consumption_per_device_15m", ({ path, payload }) =>
        guard(path.sub, sim.virtualConsumption(path.sub, payload.payload)))
      .handle("rec_flexibility_windows", ({ path, payload }) =>
        guard(path.sub, sim.flexibilityWindows(path.sub, payload.payload)))
      .handle("unknown_fetcher", ({ path }) =>
        guard(path.sub, unknownFetcher(sim.participant(path.sub), path.fetcher, "participants", participantFetchers)))
  }))

export const CommunitiesLive = HttpApiBuilder.group(DigitalTwinApi, "communities", (handlers) =>
  Effect.gen(function*() {
    const sim = yield* Simulator
    const guard = <A, E, R>(communityId: string, answer: Effect.Effect<A, E, R>) =>
      Effect.zipRight(Access.community(communityId), answer)
    return handlers
      .handle("rec_self_consumption", ({ path, payload }) =>
        guard(path.community_id, sim.selfConsumption(path.community_id, payload.payload)))
      .handle("rec_self_consumption_daily", ({ path, payload }) =>
        guard(path.community_id, sim.selfConsumptionDaily(path.community_id, payload.payload)))
      .handle("rec_settlement_1h", ({ path, payload }) =>
        guard(path.community_id, sim.settlement(path.community_id, payload.payload)))
      .handle("rec_forecast", ({ path, payload }) => guard(path.community_id, sim.forecast(path.community_id, payload.payload)))
      .handle("unknown_fetcher", ({ path }) =>
        guard(
          path.community_id,
          unknownFetcher(sim.community(path.community_id), path.fetcher, `community '${path.community_id}'`, communityFetchers)
        ))
  }))

/** The three groups, on the `Simulator` (provide it, e.g. `Simulator.layer(options)`). */
export const SimulatorGroupsLive = Layer.mergeAll(GridLive, ParticipantsLive, CommunitiesLive)
