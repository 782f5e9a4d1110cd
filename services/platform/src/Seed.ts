/**
 * The demo data, applied on every start and idempotent: each part goes through the owning
 * service's own logic, so it is valid data, and is only added when it is not there yet.
 *
 * | data | how |
 * |---|---|
 * | the community `it-energy-community` (members, sites, assets, meters) | the registry's `REGISTRY_SEED_BUNDLE` (`examples/it-energy-community.bundle.yaml`): imported when the registry does not hold it |
 * | nudge kinds, rules and templates | the nudging service's bundled seed (`SEED_DIR`), applied at its start |
 * | training materials | the assistant's own training sync of the launcher's repository of `examples/assistant/` (`Training`) |
 * | flexibility windows, forecasts, settlement readings | the digital-twin simulator: deterministic, nothing to store |
 * | the DSO operator's alert rules and notification settings | here: the grid gateway's API with `dso-operator`'s token |
 *
 * User ids are those of dev/identities.yaml (the bundle's members name the `participant` users'
 * `sub`), so dev tokens see their data.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Effect, Layer } from "effect"
import * as Hosts from "./Hosts.js"
import type { Context } from "./Launcher.js"

/** The DSO operator of the simulated network `dso-alto-garda` (dev/identities.yaml). */
export const dsoOperator = "dso-operator"
export const dsoNetwork = "dso-alto-garda"
export const dsoControlRoom = "control-room@alto-garda-distribuzione.example"

/** The operator's rules: any wind or heat warning, and wind alerts to the control room. */
export const alertRules = [
  { risk_types: ["wind", "heat"], threshold: "WARNING", recipients: null },
  { risk_types: ["wind"], threshold: "ALERT", recipients: [dsoControlRoom] }
] as const

const sameRule = (
  a: { readonly risk_types: ReadonlyArray<string>; readonly threshold: string; readonly network_id?: string },
  b: { readonly risk_types: ReadonlyArray<string>; readonly threshold: string }
) => a.threshold === b.threshold && [...a.risk_types].sort().join(",") === [...b.risk_types].sort().join(",")

/** A typed client of the grid gateway acting as `username`. */
const gridClient = (context: Context, username: string) =>
  Effect.gen(function*() {
    const token = yield* context.idp.mint(username)
    // Imported here: the launcher loads a service's code only when it runs it.
    const { Api: GridApi } = yield* Effect.promise(() => import("@rec/grid-gateway-service"))
    return yield* HttpApiClient.make(GridApi, {
      baseUrl: `http://${Hosts.forConnecting(context.options.host)}:${context.options.ports.gridGateway}`,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
    })
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** The DSO operator's alert rules and e-mail recipients; returns how many rules were added. */
export const gridGateway = (context: Context) =>
  Effect.gen(function*() {
    const grid = yield* gridClient(context, dsoOperator)
    const operator = context.idp.identities.users.get(dsoOperator)
    const existing = yield* grid.alertRules.list()
    let added = 0
    for (const rule of alertRules) {
      if (existing.some((r) => r.network_id === dsoNetwork && sameRule(r, rule))) continue
      yield* grid.alertRules.create({
        payload: {
          network_id: dsoNetwork,
          risk_types: [...rule.risk_types] as never,
          threshold: rule.threshold,
          ...(rule.recipients === null ? {} : { recipients: [...rule.recipients] })
        }
      })
      added += 1
    }
    // Only when never saved: an operator's own later settings win.
    const settings = yield* grid.notificationSettings.get()
    if (settings.updated_at === null && operator?.email !== undefined) {
      yield* grid.notificationSettings.put({ payload: { email_recipients: [operator.email] } })
    }
    return added
  }).pipe(Effect.withSpan("Seed.gridGateway"))

/** Applies what the services do not seed themselves; a failure is logged, not fatal. */
export const layer = (context: Context): Layer.Layer<never> =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      if (!context.options.services.includes("grid-gateway")) return
      const added = yield* gridGateway(context)
      yield* Effect.logInfo(
        added === 0
          ? `seed: ${dsoOperator}'s alert rules are already there`
          : `seed: ${added} alert rule(s) for ${dsoOperator} on ${dsoNetwork}`
      )
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logError("seed: the grid gateway's demo data could not be applied", cause)),
      Effect.annotateLogs("component", "seed")
    )
  )
