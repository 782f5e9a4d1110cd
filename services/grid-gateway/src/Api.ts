/**
 * The grid operator gateway's HTTP contract (spec part B section 4), every route under `/api`;
 * docs at `/api/docs`, `/api/redoc`, `/api/openapi.json`. Other services and tests derive typed
 * clients from it (`HttpApiClient.make(Api)`).
 *
 * Every endpoint needs an access token (`Authorization: Bearer`, or the header named by
 * `JWT_HEADER_NAME` that an authenticating proxy sets): 401 without one or with a bad one.
 * Access is decided by `policies/grid/grid.rego` (403 with the policy's reason).
 *
 * - `me`: who the caller is and which network they operate;
 * - `grid`: the digital twin's wind and heat risk data of a network, scoped to the operator's DSO
 *   (upstream failures: its 4xx kept, 5xx or an unreadable answer 502, no answer in time 504);
 * - `alertRules`, `notificationSettings`: the caller's own alert rules and delivery settings.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "@rec/auth"
import { GridSchemas } from "@rec/digital-twin"
import { Contract, HttpErrors } from "@rec/platform"
import * as Schema from "effect/Schema"
import * as Domain from "./Domain.js"

export class MeGroup extends HttpApiGroup.make("me")
  .add(
    HttpApiEndpoint.get("me", "/api/me")
      .setHeaders(Domain.LanguageHeaders)
      .addSuccess(Domain.MeResponse)
      .addError(HttpErrors.Forbidden)
      .annotate(OpenApi.Summary, "The caller: identity, locale and the network of their DSO organization")
      .annotate(OpenApi.Description, "403 for a user who belongs to no DSO organization.")
  )
  .annotate(OpenApi.Title, "Me")
{}

const cached = "Answered with `Cache-Control: public, max-age=3600`."

const gridGet = <const Name extends string, const Path extends string>(name: Name, path: Path) =>
  HttpApiEndpoint.get(name, `/api/grid/:network_id${path}`).setPath(Domain.NetworkPath)

export class GridGroup extends HttpApiGroup.make("grid")
  .add(
    gridGet("windMap", "/wind/map").setUrlParams(GridSchemas.MapFilters).addSuccess(GridSchemas.WindMap)
      .annotate(OpenApi.Summary, "Overhead conductors with their daily wind risk (GeoJSON)")
  )
  .add(
    gridGet("windBosco", "/wind/bosco").setUrlParams(GridSchemas.AreaFilters).addSuccess(GridSchemas.WindBosco)
      .annotate(OpenApi.Summary, "Overhead conductors in woodland with their daily wind risk (GeoJSON)")
  )
  .add(
    gridGet("windAlertDistribution", "/wind/alert-distribution").setUrlParams(GridSchemas.AreaFilters)
      .addSuccess(GridSchemas.AlertDistribution)
      .annotate(OpenApi.Summary, "Segment-days per wind risk level")
  )
  .add(
    gridGet("windTrend", "/wind/trend").addSuccess(GridSchemas.Trend)
      .annotate(OpenApi.Summary, "Daily maximum gust excess, yesterday to +2 days")
  )
  .add(
    gridGet("heatMap", "/heat/map").setUrlParams(GridSchemas.MapFilters).addSuccess(GridSchemas.HeatMap)
      .annotate(OpenApi.Summary, "Underground cables with their daily heat risk (GeoJSON)")
  )
  .add(
    gridGet("heatAlertDistribution", "/heat/alert-distribution").setUrlParams(GridSchemas.AreaFilters)
      .addSuccess(GridSchemas.AlertDistribution)
      .annotate(OpenApi.Summary, "Segment-days per heat risk level")
  )
  .add(
    gridGet("heatTrend", "/heat/trend").addSuccess(GridSchemas.Trend)
      .annotate(OpenApi.Summary, "Daily maximum cable temperature, -3 to +2 days")
  )
  .add(
    gridGet("substationsMap", "/substations/map").addSuccess(GridSchemas.SubstationsMap)
      .annotate(OpenApi.Summary, "Secondary substations (GeoJSON points)")
  )
  .add(
    gridGet("filters", "/filters").addSuccess(Domain.Filters)
      .annotate(OpenApi.Summary, "Filter values and map extent of the network")
      .annotate(OpenApi.Description, "Empty lists and null extents when the digital twin has no row.")
  )
  .add(
    gridGet("summary", "/summary").addSuccess(GridSchemas.GridSummary)
      .annotate(OpenApi.Summary, "Network summary: assets and today's risk counts")
  )
  .add(
    gridGet("tileIndex", "/tile-index").addSuccess(GridSchemas.TileIndexResult)
      .annotate(OpenApi.Summary, "Map tiles of the network")
      .annotate(OpenApi.Description, cached)
  )
  .add(
    gridGet("shapes", "/shapes").setUrlParams(Domain.ShapesQuery).addSuccess(Domain.ShapesCollection)
      .annotate(OpenApi.Summary, "Line segments as a GeoJSON FeatureCollection (by asset type and tile)")
      .annotate(
        OpenApi.Description,
        `Assembled from the digital twin's rows: each row's stored GeoJSON is the geometry, its other columns the ` +
          `properties; rows without a usable geometry are left out. ${cached}`
      )
  )
  .add(
    gridGet("risks", "/risks").setUrlParams(Domain.RisksQuery).addSuccess(GridSchemas.RisksResult)
      .annotate(OpenApi.Summary, "Per-segment risk for the given days")
  )
  .add(
    gridGet("risksNow", "/risks-now").setUrlParams(Domain.RisksNowQuery).addSuccess(GridSchemas.RisksNowResult)
      .annotate(OpenApi.Summary, "Current per-segment risk (nowcast); no dates")
  )
  .add(
    gridGet("trendline", "/trendline").setUrlParams(Domain.TrendlineQuery).addSuccess(GridSchemas.TrendlineResult)
      .annotate(OpenApi.Summary, "Daily alert and warning counts between two days")
  )
  // What an upstream failure becomes (`Upstream.httpErrors`; 400, 403 and 503 are the API's).
  .addError(HttpErrors.Unauthorized)
  .addError(HttpErrors.NotFound)
  .addError(HttpErrors.Conflict)
  .addError(HttpErrors.UnprocessableEntity)
  .addError(HttpErrors.TooManyRequests)
  .addError(HttpErrors.BadGateway)
  .addError(HttpErrors.GatewayTimeout)
  .annotate(OpenApi.Title, "Grid")
  .annotate(
    OpenApi.Description,
    "The digital twin's data of a distribution network, for operators of its DSO and services with grid.read. " +
      "Query lists repeat the key (`?dates=2026-08-17&dates=2026-08-18`). Digital-twin failures: its 4xx kept, " +
      "5xx or an unreadable answer 502, no answer in time 504, each with a detail naming the operation."
  )
{}

export class AlertRulesGroup extends HttpApiGroup.make("alertRules")
  .add(
    HttpApiEndpoint.get("list", "/api/alert-rules")
      .addSuccess(Schema.Array(Domain.AlertRule))
      .annotate(OpenApi.Summary, "The caller's alert rules, oldest first")
  )
  .add(
    HttpApiEndpoint.post("create", "/api/alert-rules")
      .setPayload(Domain.AlertRuleCreate)
      .addSuccess(Domain.AlertRule, { status: 201 })
      .addError(HttpErrors.UnprocessableEntity)
      .annotate(OpenApi.Summary, "Create an alert rule for a network of the caller's DSO")
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/alert-rules/:id")
      .setPath(Domain.AlertRulePath)
      .setPayload(Domain.AlertRuleUpdate)
      .addSuccess(Domain.AlertRule)
      .addError(HttpErrors.NotFound)
      .addError(HttpErrors.UnprocessableEntity)
      .annotate(OpenApi.Summary, "Change some fields of one of the caller's rules")
      .annotate(OpenApi.Description, "Fields left out are kept; null clears recipients and is refused (422) for the others.")
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/alert-rules/:id")
      .setPath(Domain.AlertRulePath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "Delete one of the caller's rules")
  )
  .annotate(OpenApi.Title, "Alert rules")
  .annotate(
    OpenApi.Description,
    "Each operator's own rules: another operator's rule is a 404. When a grid pipeline run completes, every active " +
      "rule whose hazards reach its threshold in the digital twin's data sends one nudge and, when its owner set a " +
      "webhook, one signed POST."
  )
{}

export class NotificationSettingsGroup extends HttpApiGroup.make("notificationSettings")
  .add(
    HttpApiEndpoint.get("get", "/api/notification-settings")
      .addSuccess(Domain.NotificationSettings)
      .annotate(OpenApi.Summary, "The caller's alert delivery settings")
  )
  .add(
    HttpApiEndpoint.put("put", "/api/notification-settings")
      .setPayload(Domain.NotificationSettingsUpdate)
      .addSuccess(Domain.NotificationSettings)
      .addError(HttpErrors.UnprocessableEntity)
      .annotate(OpenApi.Summary, "Change the caller's alert delivery settings (fields left out are kept)")
      .annotate(
        OpenApi.Description,
        "A webhook URL must be https (unless WEBHOOK_ALLOW_HTTP=true) and must not resolve to a private, loopback or " +
          "link-local address (unless WEBHOOK_ALLOW_PRIVATE=true): 422 otherwise. Setting a new URL, or " +
          "`rotate_webhook_secret: true`, answers the signing secret once (`webhook_secret`). Deliveries are POSTs with " +
          "`X-REC-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>`."
      )
  )
  .annotate(OpenApi.Title, "Notification settings")
{}

export class Api extends Contract.make("grid-gateway")
  .add(MeGroup)
  .add(GridGroup)
  .add(AlertRulesGroup)
  .add(NotificationSettingsGroup)
  // Every endpoint asks the policy: denied, no policies loaded (fail closed), a broken policy.
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.ServiceUnavailable)
  .addError(HttpErrors.InternalServerError)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Grid operator gateway")
  .annotate(
    OpenApi.Description,
    "Wind and heat risk of distribution networks for their operators, alert rules, and alert delivery settings. " +
      "Access: policies/grid/grid.rego."
  )
{}
