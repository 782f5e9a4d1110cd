/**
 * The typed digital-twin client the gateways use, derived from the contract
 * (`HttpApiClient.makeWith(DigitalTwinApi)`):
 *
 * - calls authenticate with the service's client-credentials token (`@rec/auth`
 *   `ClientCredentials`, scope `DT_CLIENT_SCOPE`), or with a caller's own token through
 *   `withToken(token)`, as the participant gateway and flexibility forward the user's token;
 * - every failure is one `DigitalTwinError` naming the operation (the reference labels:
 *   `wind_map`, `risks_now`, `meters_data`, ...) with an HTTP status for the gateway to answer
 *   with: the digital twin's own status when it answered (404 stays 404), 502 when it answered
 *   something unreadable or could not be reached, 503 when no token could be had, 504 after
 *   the timeout (default 10 seconds), 400 when the request itself was invalid.
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { ClientCredentials } from "@rec/auth"
import { HttpErrors, OutboundHttp } from "@rec/platform"
import type { ConfigError } from "effect"
import { Config, Context, Duration, Effect, FiberRef, Layer, Option, ParseResult, Predicate, Redacted, Schema } from "effect"
import { globalValue } from "effect/GlobalValue"
import { DigitalTwinApi } from "./Api.js"
import { withCompiledCheck } from "./CompiledCheck.js"
import * as Energy from "./EnergySchemas.js"
import * as Grid from "./GridSchemas.js"
import { type Fold, foldedItems } from "./ItemsFold.js"
import { ValuesRequest } from "./Values.js"

export class DigitalTwinError extends Schema.TaggedError<DigitalTwinError>()("DigitalTwinError", {
  /** The operation that failed, named as in the reference gateways (`wind_map`, `meters_data`, ...). */
  operation: Schema.String,
  /** The status a gateway should answer with: the digital twin's, or 502/503/504 (see the module). */
  status: Schema.Int,
  message: Schema.String,
  /**
   * The digital twin's own status when it answered with an error (absent when it was not
   * reached, gave no token, timed out or sent an unreadable body), so a gateway can tell the
   * twin's 503 from "no token" and its 504 from a timeout.
   */
  upstreamStatus: Schema.optional(Schema.Int)
}) {
  /** The reference gateways' error body text: `DT error: <operation>`. */
  get detail(): string {
    return `DT error: ${this.operation}`
  }
}

type Op<A> = Effect.Effect<A, DigitalTwinError>
type Payload<S extends Schema.Schema.Any> = Schema.Schema.Type<S>

export interface GridOperations {
  readonly windMap: (networkId: string, filters?: Grid.MapFilters) => Op<Grid.WindMap>
  readonly windBosco: (networkId: string, filters?: Grid.AreaFilters) => Op<Grid.WindBosco>
  readonly windAlertDistribution: (networkId: string, filters?: Grid.AreaFilters) => Op<Grid.AlertDistribution>
  readonly windTrend: (networkId: string) => Op<Grid.Trend>
  readonly heatMap: (networkId: string, filters?: Grid.MapFilters) => Op<Grid.HeatMap>
  readonly heatAlertDistribution: (networkId: string, filters?: Grid.AreaFilters) => Op<Grid.AlertDistribution>
  readonly heatTrend: (networkId: string) => Op<Grid.Trend>
  readonly substationsMap: (networkId: string) => Op<Grid.SubstationsMap>
  readonly summary: (networkId: string) => Op<Grid.GridSummary>
  readonly filters: (networkId: string, payload?: Payload<typeof Grid.FiltersPayload>) => Op<typeof Grid.FiltersResult.Type>
  readonly tileIndex: (
    networkId: string,
    payload?: Payload<typeof Grid.TileIndexPayload>
  ) => Op<typeof Grid.TileIndexResult.Type>
  readonly shapes: (networkId: string, payload?: Payload<typeof Grid.ShapesPayload>) => Op<typeof Grid.ShapesResult.Type>
  readonly risks: (networkId: string, payload: Payload<typeof Grid.RisksPayload>) => Op<typeof Grid.RisksResult.Type>
  readonly risksNow: (
    networkId: string,
    payload?: Payload<typeof Grid.RisksNowPayload>
  ) => Op<typeof Grid.RisksNowResult.Type>
  readonly trendline: (
    networkId: string,
    payload: Payload<typeof Grid.TrendlinePayload>
  ) => Op<typeof Grid.TrendlineResult.Type>
}

export interface ParticipantOperations {
  readonly profile: (sub: string) => Op<Energy.Profile>
  readonly assets: (sub: string) => Op<Energy.AssetList>
  readonly metersData: (
    sub: string,
    payload: Payload<typeof Energy.MetersDataPayload>
  ) => Op<typeof Energy.MetersDataResult.Type>
  readonly virtualConsumption: (
    sub: string,
    payload: Payload<typeof Energy.VirtualConsumptionPayload>
  ) => Op<typeof Energy.VirtualConsumptionResult.Type>
  /** `meters_data` summed while it is checked (the rows are not kept). */
  readonly metersDataTotals: (sub: string, payload: Payload<typeof Energy.MetersDataPayload>) => Op<MeterTotals>
  /** `rec_virtual_consumption_per_device_15m` summed while it is checked (the rows are not kept). */
  readonly virtualConsumptionTotals: (
    sub: string,
    payload: Payload<typeof Energy.VirtualConsumptionPayload>
  ) => Op<SharedTotals>
  readonly flexibilityWindows: (
    sub: string,
    payload: Payload<typeof Energy.FlexibilityWindowsPayload>
  ) => Op<typeof Energy.FlexibilityWindowsResult.Type>
}

export interface CommunityOperations {
  readonly selfConsumption: (
    communityId: string,
    payload: Payload<typeof Energy.SelfConsumptionPayload>
  ) => Op<typeof Energy.SelfConsumptionResult.Type>
  readonly selfConsumptionDaily: (
    communityId: string,
    payload: Payload<typeof Energy.SelfConsumptionPayload>
  ) => Op<typeof Energy.SelfConsumptionDailyResult.Type>
  readonly settlement: (
    communityId: string,
    payload: Payload<typeof Energy.SettlementPayload>
  ) => Op<typeof Energy.SettlementResult.Type>
  readonly forecast: (
    communityId: string,
    payload: Payload<typeof Energy.ForecastPayload>
  ) => Op<typeof Energy.ForecastResult.Type>
}

export interface DigitalTwinOperations {
  readonly grid: GridOperations
  readonly participants: ParticipantOperations
  readonly communities: CommunityOperations
}

export interface DigitalTwinClientService extends DigitalTwinOperations {
  /** The same operations, authenticated with a caller's token instead of the service's. */
  readonly withToken: (token: Redacted.Redacted | string) => DigitalTwinOperations
}

export interface DigitalTwinClientOptions {
  /** Base URL of the digital twin (`DIGITAL_TWIN_API_URL`). */
  readonly baseUrl: string
  /** Per call, including getting a token. Default 10 seconds. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The service's own tokens; without them only `withToken` calls can succeed (others fail with 503). */
  readonly tokens?: ClientCredentials.TokenProvider | undefined
}

/** Totals of a participant's 15-minute readings (`meters_data`) over a window. */
export interface MeterTotals {
  /** Rows summed (the fetcher's answer holds at most `limit` rows: `rows === limit` may mean more). */
  readonly rows: number
  readonly limit: number
  readonly production_kwh: number
  readonly consumption_kwh: number
}

/** Totals of a participant's shared energy (`rec_virtual_consumption_per_device_15m`) over a window. */
export interface SharedTotals {
  readonly rows: number
  readonly limit: number
  readonly consumption_kwh: number
  readonly virtual_consumption_kwh: number
}

/** `meters_data` summed row by row (in the answer's order) as it is read. */
const meterTotals: Fold<typeof Energy.MeterReading.Type, typeof Energy.MetersDataResult.Type, MeterTotals> = {
  start: () => {
    let production = 0
    let consumption = 0
    return {
      add: (r) => {
        production += r.production_kwh
        consumption += r.consumption_kwh
      },
      finish: (page, rows) => ({ rows, limit: page.limit, production_kwh: production, consumption_kwh: consumption })
    }
  }
}

/** `rec_virtual_consumption_per_device_15m` summed row by row as it is read. */
const sharedTotals: Fold<typeof Energy.VirtualConsumptionItem.Type, typeof Energy.VirtualConsumptionResult.Type, SharedTotals> = {
  start: () => {
    let consumption = 0
    let virtual = 0
    return {
      add: (r) => {
        consumption += r.consumption_kwh
        virtual += r.virtual_consumption_kwh
      },
      finish: (page, rows) => ({ rows, limit: page.limit, consumption_kwh: consumption, virtual_consumption_kwh: virtual })
    }
  }
}

const readingsEndpoint = <const Name extends string, P extends Schema.Schema.Any>(
  name: Name,
  fetcher: keyof typeof Energy.participantFetchers,
  payload: P
) =>
  HttpApiEndpoint.post(name, `/participants/:sub/values/${fetcher}`)
    .setPath(Energy.ParticipantPath)
    .setPayload(ValuesRequest(payload))

/**
 * How this client reads the 15-minute reading fetchers (a month is thousands of rows), on the
 * contract's paths, payloads and errors (client side only: the simulator never serves it): the
 * answers are checked by their compiled checks (`CompiledCheck`: the same result as decoding, a
 * fraction of the CPU and garbage), and the `*_totals` variants fold the rows into sums straight from
 * the answer's bytes, a batch at a time (`ItemsFold`: no month-long string, no rows kept).
 */
class ReadingsGroup extends HttpApiGroup.make("readings")
  .add(readingsEndpoint("meters_data", "meters_data", Energy.MetersDataPayload).addSuccess(withCompiledCheck(Energy.MetersDataResult)))
  .add(
    readingsEndpoint("rec_virtual_consumption_per_device_15m", "rec_virtual_consumption_per_device_15m", Energy.VirtualConsumptionPayload)
      .addSuccess(withCompiledCheck(Energy.VirtualConsumptionResult))
  )
  .add(
    readingsEndpoint("meters_data_totals", "meters_data", Energy.MetersDataPayload)
      .addSuccess(foldedItems(Energy.MetersDataResult, Energy.MeterReading, meterTotals, { identifier: "MeterTotals" }))
  )
  .add(
    readingsEndpoint("shared_totals", "rec_virtual_consumption_per_device_15m", Energy.VirtualConsumptionPayload)
      .addSuccess(
        foldedItems(Energy.VirtualConsumptionResult, Energy.VirtualConsumptionItem, sharedTotals, { identifier: "SharedTotals" })
      )
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.NotFound)
{}

const riskEndpoint = <const Name extends "risks" | "risks_now", P extends Schema.Schema.Any>(name: Name, payload: P) =>
  HttpApiEndpoint.post(name, `/grid/:network_id/values/${name}`).setPath(Grid.NetworkPath).setPayload(ValuesRequest(payload))

/**
 * The risk fetchers on the contract's paths, payloads and errors (client side only, as
 * `ReadingsGroup`): a day of risks is one item per segment and hazard, checked by the compiled
 * check instead of being rebuilt item by item (the grid gateway relays these answers as they are).
 */
class RisksGroup extends HttpApiGroup.make("risksChecked")
  .add(riskEndpoint("risks", Grid.RisksPayload).addSuccess(withCompiledCheck(Grid.RisksResult)))
  .add(riskEndpoint("risks_now", Grid.RisksNowPayload).addSuccess(withCompiledCheck(Grid.RisksNowResult)))
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.NotFound)
{}

const ClientApi = DigitalTwinApi.add(ReadingsGroup).add(RisksGroup)

/** The caller's token for calls made through `withToken`. */
const forwardedToken = globalValue(
  "@rec/digital-twin/Client/forwardedToken",
  () => FiberRef.unsafeMake<Option.Option<Redacted.Redacted>>(Option.none())
)

/** A response the digital twin sent that does not match the contract. */
class UnreadableResponse {
  readonly _tag = "UnreadableResponse"
  constructor(readonly error: ParseResult.ParseError) {}
}

/** Maps anything a call can fail with to the gateway-facing error. */
export const toDigitalTwinError = (operation: string, error: unknown): DigitalTwinError => {
  const make = (status: number, message: string, upstreamStatus?: number) =>
    new DigitalTwinError({ operation, status, message, ...(upstreamStatus === undefined ? {} : { upstreamStatus }) })
  if (error instanceof DigitalTwinError) return error
  if (error instanceof UnreadableResponse) {
    return make(502, `The digital twin's answer does not match the contract: ${error.error.message}`)
  }
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "ResponseError") {
      const status = error.response.status
      return status >= 400
        ? make(status, `The digital twin answered ${status}`, status)
        : make(502, `The digital twin answered ${status}`)
    }
    return make(502, `The digital twin is unreachable: ${error.message}`)
  }
  if (error instanceof ClientCredentials.TokenRequestError) {
    return make(503, `No token for the digital twin: ${error.message}`)
  }
  if (ParseResult.isParseError(error)) return make(400, `Invalid request to the digital twin: ${error.message}`)
  // Errors the contract declares (NotFound, Forbidden, UnknownFetcher, BadRequest, ...)
  // arrive decoded; their schema carries the status the digital twin answered with.
  if (Predicate.hasProperty(error, "_tag") && Predicate.hasProperty(error, "constructor")) {
    const schema = (error as { readonly constructor: unknown }).constructor
    if (Schema.isSchema(schema)) {
      const detail = Predicate.hasProperty(error, "detail") && typeof error.detail === "string" ? `: ${error.detail}` : ""
      const status = HttpApiSchema.getStatusErrorAST(schema.ast)
      return make(status, `The digital twin answered ${String(error._tag)}${detail}`, status)
    }
  }
  return make(502, `The digital twin call failed: ${String(error)}`)
}

const bearer = (request: HttpClientRequest.HttpClientRequest, token: Redacted.Redacted) =>
  HttpClientRequest.bearerToken(request, Redacted.value(token))

/** Builds the client on the `HttpClient` in context. */
export const make = (
  options: DigitalTwinClientOptions
): Effect.Effect<DigitalTwinClientService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const timeout = Duration.decode(options.timeout ?? Duration.seconds(10))
    type Failure = HttpClientError.HttpClientError | ClientCredentials.TokenRequestError

    const serviceHttp: HttpClient.HttpClient.With<Failure> = options.tokens === undefined
      ? HttpClient.mapRequestEffect(http, () =>
        Effect.fail(
          new ClientCredentials.TokenRequestError({
            reason: "unreachable",
            message: "no client credentials are configured for the digital twin (PLATFORM_OIDC_CLIENT_ID)"
          })
        ))
      : http.pipe(ClientCredentials.withToken(options.tokens))
    const forwardingHttp: HttpClient.HttpClient.With<Failure> = HttpClient.mapRequestEffect(http, (request) =>
      Effect.map(FiberRef.get(forwardedToken), Option.match({
        onNone: () => request,
        onSome: (token) => bearer(request, token)
      })))

    const api = (httpClient: HttpClient.HttpClient.With<Failure>) =>
      HttpApiClient.makeWith(ClientApi, {
        httpClient,
        baseUrl: options.baseUrl,
        transformResponse: (response) =>
          Effect.mapError(response, (error) => (ParseResult.isParseError(error) ? new UnreadableResponse(error) : error))
      })
    const serviceApi = yield* api(serviceHttp)
    const forwardingApi = yield* api(forwardingHttp)

    const run = <A, E, R>(operation: string, call: Effect.Effect<A, E, R>): Effect.Effect<A, DigitalTwinError, R> =>
      call.pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new DigitalTwinError({
              operation,
              status: 504,
              message: `The digital twin did not answer within ${Duration.format(timeout)}`
            })
        }),
        Effect.mapError((error) => toDigitalTwinError(operation, error)),
        Effect.withSpan(`DigitalTwinClient.${operation}`, { attributes: { "peer.service": "digital-twin" } })
      )

    const operations = (client: typeof serviceApi, wrap: <A>(call: Op<A>) => Op<A>): DigitalTwinOperations => {
      const op = <A, E>(operation: string, call: Effect.Effect<A, E>) => wrap(run(operation, call))
      const path = (network_id: string) => ({ network_id })
      const values = <P>(payload: P) => ({ payload })
      return {
        grid: {
          windMap: (id, filters = {}) => op("wind_map", client.grid.wind_map({ path: path(id), urlParams: filters })),
          windBosco: (id, filters = {}) => op("wind_bosco", client.grid.wind_bosco({ path: path(id), urlParams: filters })),
          windAlertDistribution: (id, filters = {}) =>
            op("wind_alert_distribution", client.grid.wind_alert_distribution({ path: path(id), urlParams: filters })),
          windTrend: (id) => op("wind_trend", client.grid.wind_trend({ path: path(id) })),
          heatMap: (id, filters = {}) => op("heat_map", client.grid.heat_map({ path: path(id), urlParams: filters })),
          heatAlertDistribution: (id, filters = {}) =>
            op("heat_alert_distribution", client.grid.heat_alert_distribution({ path: path(id), urlParams: filters })),
          heatTrend: (id) => op("heat_trend", client.grid.heat_trend({ path: path(id) })),
          substationsMap: (id) => op("substations_map", client.grid.substations_map({ path: path(id) })),
          summary: (id) => op("summary", client.grid.summary({ path: path(id) })),
          filters: (id, payload = {}) => op("filters", client.grid.filters({ path: path(id), payload: values(payload) })),
          tileIndex: (id, payload = {}) =>
            op("tile_index", client.grid.tile_index({ path: path(id), payload: values(payload) })),
          shapes: (id, payload = {}) => op("shapes", client.grid.shapes({ path: path(id), payload: values(payload) })),
          risks: (id, payload) => op("risks", client.risksChecked.risks({ path: path(id), payload: values(payload) })),
          risksNow: (id, payload = {}) =>
            op("risks_now", client.risksChecked.risks_now({ path: path(id), payload: values(payload) })),
          trendline: (id, payload) => op("trendline", client.grid.trendline({ path: path(id), payload: values(payload) }))
        },
        participants: {
          profile: (sub) => op("profile", client.participants.profile({ path: { sub } })),
          assets: (sub) => op("assets", client.participants.assets({ path: { sub } })),
          metersData: (sub, payload) =>
            op("meters_data", client.readings.meters_data({ path: { sub }, payload: values(payload) })),
          virtualConsumption: (sub, payload) =>
            op(
              "rec_virtual_consumption_per_device_15m",
              client.readings.rec_virtual_consumption_per_device_15m({ path: { sub }, payload: values(payload) })
            ),
          metersDataTotals: (sub, payload) =>
            op("meters_data", client.readings.meters_data_totals({ path: { sub }, payload: values(payload) })),
          virtualConsumptionTotals: (sub, payload) =>
            op(
              "rec_virtual_consumption_per_device_15m",
              client.readings.shared_totals({ path: { sub }, payload: values(payload) })
            ),
          flexibilityWindows: (sub, payload) =>
            op(
              "rec_flexibility_windows",
              client.participants.rec_flexibility_windows({ path: { sub }, payload: values(payload) })
            )
        },
        communities: {
          selfConsumption: (community_id, payload) =>
            op(
              "rec_self_consumption",
              client.communities.rec_self_consumption({ path: { community_id }, payload: values(payload) })
            ),
          selfConsumptionDaily: (community_id, payload) =>
            op(
              "rec_self_consumption_daily",
              client.communities.rec_self_consumption_daily({ path: { community_id }, payload: values(payload) })
            ),
          settlement: (community_id, payload) =>
            op("rec_settlement_1h", client.communities.rec_settlement_1h({ path: { community_id }, payload: values(payload) })),
          forecast: (community_id, payload) =>
            op("rec_forecast", client.communities.rec_forecast({ path: { community_id }, payload: values(payload) }))
        }
      }
    }

    return {
      ...operations(serviceApi, (call) => call),
      withToken: (token) => {
        const secret = typeof token === "string" ? Redacted.make(token) : token
        return operations(forwardingApi, (call) => Effect.locally(call, forwardedToken, Option.some(secret)))
      }
    }
  })

/** `DIGITAL_TWIN_API_URL` (default http://localhost:8002) and `DIGITAL_TWIN_TIMEOUT` (default 10 seconds). */
export const DigitalTwinClientConfig = Config.all({
  baseUrl: Config.nonEmptyString("DIGITAL_TWIN_API_URL").pipe(Config.withDefault("http://localhost:8002")),
  timeout: Config.duration("DIGITAL_TWIN_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10)))
})

export class DigitalTwinClient extends Context.Tag("@rec/digital-twin/DigitalTwinClient")<
  DigitalTwinClient,
  DigitalTwinClientService
>() {
  /** With explicit options, on the `HttpClient` provided below. */
  static readonly layer = (
    options: DigitalTwinClientOptions
  ): Layer.Layer<DigitalTwinClient, never, HttpClient.HttpClient> => Layer.effect(DigitalTwinClient, make(options))

  /**
   * From the environment: `DIGITAL_TWIN_API_URL`, `DIGITAL_TWIN_TIMEOUT`, and the service's
   * client credentials (`PLATFORM_OIDC_CLIENT_ID`/`_SECRET`, token endpoint discovered from
   * `PLATFORM_OIDC_BASE_URL`) with the scope `DT_CLIENT_SCOPE`. Without a client id only
   * `withToken` calls work. Outbound calls carry the request id (`OutboundHttp`).
   */
  static readonly layerConfig: Layer.Layer<DigitalTwinClient, ConfigError.ConfigError> = Layer.effect(
    DigitalTwinClient,
    Effect.gen(function*() {
      const config = yield* DigitalTwinClientConfig
      const clientId = yield* Config.option(Config.nonEmptyString("PLATFORM_OIDC_CLIENT_ID"))
      const tokens = Option.isNone(clientId) ? undefined : yield* ClientCredentials.fromConfig({
        scope: Config.option(Config.string("DT_CLIENT_SCOPE")).pipe(Config.map(Option.filter((s) => s.trim() !== "")))
      })
      return yield* make({ ...config, tokens })
    })
  ).pipe(Layer.provide(OutboundHttp.layer))
}
