/**
 * The contract of the digital-twin endpoints the platform consumes (the external digital twin
 * of the reference deployment, and the simulator in this package):
 *
 * - `grid`: wind and heat risk of a distribution network (`/grid/{network_id}/...`), used by
 *   the grid gateway with a client-credentials token;
 * - `participants`: a participant's profile, assets and meter data, read with the
 *   participant's own token (participant gateway, flexibility);
 * - `communities`: community self-consumption, settlement and forecast.
 *
 * Values fetchers are `POST .../values/<fetcher>` with `{"payload": {...}}`; each known fetcher
 * is its own endpoint (typed payload and items) and any other id gets 404 `UnknownFetcher`.
 * A payload that does not match its schema is a 400 `{detail, issues}` naming the field.
 * Every endpoint needs a bearer token (`@rec/auth`'s `Authentication`: 401 `Unauthorized`, 503
 * when the identity provider's keys are unreachable); 403 `Forbidden` when the token may not read
 * the network, participant or community; 404 `NotFound` for unknown ones.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "@rec/auth"
import { Contract, HttpErrors } from "@rec/platform"
import { Schema } from "effect"
import * as Energy from "./EnergySchemas.js"
import { UnknownFetcher } from "./Errors.js"
import * as Grid from "./GridSchemas.js"
import { AnyValuesRequest, FetcherId, ValuesRequest } from "./Values.js"

/** The catch-all for any other fetcher id of an entity: 404 UnknownFetcher listing the group's fetchers. */
const unknownFetcher = <Path extends Schema.Schema.Any>(
  entity: `/${string}`,
  path: Path & HttpApiEndpoint.HttpApiEndpoint.ValidatePath<Path>,
  group: string
) =>
  HttpApiEndpoint.post("unknown_fetcher", `${entity}/values/:fetcher`)
    .setPath(path)
    .setPayload(AnyValuesRequest)
    .addError(UnknownFetcher)
    .annotate(OpenApi.Description, `Any other fetcher id: 404 UnknownFetcher listing the ${group} fetchers`)

const gridGet = <const Name extends string>(name: Name, path: string) =>
  HttpApiEndpoint.get(name, `/grid/:network_id${path}`).setPath(Grid.NetworkPath)

const gridValues = <const Name extends keyof typeof Grid.gridFetchers, P extends Schema.Schema.Any>(name: Name, payload: P) =>
  HttpApiEndpoint.post(name, `/grid/:network_id/values/${name}`).setPath(Grid.NetworkPath).setPayload(ValuesRequest(payload))

export class GridGroup extends HttpApiGroup.make("grid")
  .add(gridGet("wind_map", "/wind/map").setUrlParams(Grid.MapFilters).addSuccess(Grid.WindMap))
  .add(gridGet("wind_bosco", "/wind/bosco").setUrlParams(Grid.AreaFilters).addSuccess(Grid.WindBosco))
  .add(gridGet("wind_alert_distribution", "/wind/alert-distribution").setUrlParams(Grid.AreaFilters).addSuccess(Grid.AlertDistribution))
  .add(gridGet("wind_trend", "/wind/trend").addSuccess(Grid.Trend))
  .add(gridGet("heat_map", "/heat/map").setUrlParams(Grid.MapFilters).addSuccess(Grid.HeatMap))
  .add(gridGet("heat_alert_distribution", "/heat/alert-distribution").setUrlParams(Grid.AreaFilters).addSuccess(Grid.AlertDistribution))
  .add(gridGet("heat_trend", "/heat/trend").addSuccess(Grid.Trend))
  .add(gridGet("substations_map", "/substations/map").addSuccess(Grid.SubstationsMap))
  .add(gridGet("summary", "/summary").addSuccess(Grid.GridSummary))
  .add(gridValues("filters", Grid.FiltersPayload).addSuccess(Grid.FiltersResult))
  .add(gridValues("tile_index", Grid.TileIndexPayload).addSuccess(Grid.TileIndexResult))
  .add(gridValues("shapes", Grid.ShapesPayload).addSuccess(Grid.ShapesResult))
  .add(gridValues("risks", Grid.RisksPayload).addSuccess(Grid.RisksResult))
  .add(gridValues("risks_now", Grid.RisksNowPayload).addSuccess(Grid.RisksNowResult))
  .add(gridValues("trendline", Grid.TrendlinePayload).addSuccess(Grid.TrendlineResult))
  .add(unknownFetcher("/grid/:network_id", Schema.Struct({ network_id: Grid.NetworkId, fetcher: FetcherId }), "grid"))
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.NotFound)
  .annotate(OpenApi.Description, "Wind and heat risk of a distribution network (domain it-grid)")
{}

const participantValues = <const Name extends keyof typeof Energy.participantFetchers, P extends Schema.Schema.Any>(
  name: Name,
  payload: P
) => HttpApiEndpoint.post(name, `/participants/:sub/values/${name}`).setPath(Energy.ParticipantPath).setPayload(ValuesRequest(payload))

export class ParticipantsGroup extends HttpApiGroup.make("participants")
  .add(HttpApiEndpoint.get("profile", "/participants/:sub/profile").setPath(Energy.ParticipantPath).addSuccess(Energy.Profile))
  .add(HttpApiEndpoint.get("assets", "/participants/:sub/assets").setPath(Energy.ParticipantPath).addSuccess(Energy.AssetList))
  .add(participantValues("meters_data", Energy.MetersDataPayload).addSuccess(Energy.MetersDataResult))
  .add(
    participantValues("rec_virtual_consumption_per_device_15m", Energy.VirtualConsumptionPayload)
      .addSuccess(Energy.VirtualConsumptionResult)
  )
  .add(participantValues("rec_flexibility_windows", Energy.FlexibilityWindowsPayload).addSuccess(Energy.FlexibilityWindowsResult))
  .add(unknownFetcher("/participants/:sub", Schema.Struct({ sub: Energy.ParticipantId, fetcher: FetcherId }), "participant"))
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.NotFound)
  .annotate(OpenApi.Description, "A participant's profile, assets and meter data")
{}

const communityValues = <const Name extends keyof typeof Energy.communityFetchers, P extends Schema.Schema.Any>(
  name: Name,
  payload: P
) =>
  HttpApiEndpoint.post(name, `/communities/it/:community_id/values/${name}`)
    .setPath(Energy.CommunityPath)
    .setPayload(ValuesRequest(payload))

export class CommunitiesGroup extends HttpApiGroup.make("communities")
  .add(communityValues("rec_self_consumption", Energy.SelfConsumptionPayload).addSuccess(Energy.SelfConsumptionResult))
  .add(
    communityValues("rec_self_consumption_daily", Energy.SelfConsumptionPayload).addSuccess(Energy.SelfConsumptionDailyResult)
  )
  .add(communityValues("rec_settlement_1h", Energy.SettlementPayload).addSuccess(Energy.SettlementResult))
  .add(communityValues("rec_forecast", Energy.ForecastPayload).addSuccess(Energy.ForecastResult))
  .add(
    unknownFetcher("/communities/it/:community_id", Schema.Struct({ community_id: Energy.CommunityId, fetcher: FetcherId }), "community")
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.NotFound)
  .annotate(OpenApi.Description, "Renewable energy community (country it) self-consumption, settlement and forecast")
{}

export class DigitalTwinApi extends Contract.make("digital-twin")
  .add(GridGroup)
  .add(ParticipantsGroup)
  .add(CommunitiesGroup)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Digital twin")
  .annotate(
    OpenApi.Description,
    "The digital-twin endpoints the REC platform consumes; served by the simulator of @rec/digital-twin"
  )
{}
