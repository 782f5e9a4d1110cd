/**
 * The remote `PolicyEngine` of `@rec/policy` against the policy service's RPC: decisions made
 * by the service with the caller's client-credentials token from the dev identity provider.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { ClientCredentials } from "@rec/auth"
import { DevIdp } from "@rec/dev-idp"
import { PolicyEngine, PolicyInput, Remote } from "@rec/policy"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { auditSince, logs, serviceLayer } from "./helpers.js"

/** A remote engine calling the service under test as the client `clientId`. */
const remoteAs = (clientId: string, scope?: string) =>
  Effect.gen(function*() {
    const idp = yield* DevIdp
    const server = yield* HttpServer.HttpServer
    const address = server.address as HttpServer.TcpAddress
    const url = `http://127.0.0.1:${address.port}`
    // The client (and its connection pool) lives as long as the test's scope.
    const http = yield* Layer.build(NodeHttpClient.layerUndici)
    const tokens = yield* ClientCredentials.make({
      issuer: Option.some(idp.issuer),
      tokenEndpoint: Option.none(),
      clientId,
      clientSecret: Redacted.make(`dev-only-secret-${clientId}`),
      scope: Option.fromNullable(scope)
    }).pipe(Effect.provide(http))
    const context = yield* Layer.build(
      Remote.layerWith({ url, scope: Option.none(), timeout: Duration.seconds(5) }, tokens).pipe(
        Layer.provide(NodeHttpClient.layerUndici)
      )
    )
    return context.unsafeMap.get(PolicyEngine.key) as PolicyEngine["Type"]
  })

/** A provider handing out a fixed token. */
const fixedToken = (token: string): ClientCredentials.TokenProvider => ({
  token: Effect.succeed(Redacted.make(token)),
  invalidate: Effect.void,
  reject: () => Effect.void
})

const viewer = (scopes: ReadonlyArray<string>): PolicyInput.PolicySubject => ({
  id: "u-remote",
  type: "user",
  groups: ["viewers"],
  scopes,
  organizations: [],
  claims: { sub: "u-remote" }
})

const datasetQuestion = (level: string, scopes: ReadonlyArray<string>) =>
  PolicyInput.make({
    subject: viewer(scopes),
    resource: { type: "dataset", id: "meters", attributes: { access_level: level } },
    action: { name: "read" },
    requestId: "remote-1"
  })

layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("remote PolicyEngine", (it) => {
  it.scoped("decides, in batches, evaluates rules and reports status over RPC", () =>
    Effect.gen(function*() {
      const engine = yield* remoteAs("svc-grid")
      const from = logs.length
      const decision = yield* engine.decide("rec.dataset.access", datasetQuestion("internal", ["dataset.query"]))
      expect(decision).toMatchObject({
        allowed: true,
        reason: "user has viewer access and client has dataset.query scope",
        package: "rec.dataset.access"
      })
      const batch = yield* engine.decideAll([
        { package: "rec.dataset.access", input: datasetQuestion("open", []) },
        { package: "rec.dataset.access", input: datasetQuestion("restricted", ["dataset.query"]) },
        { package: "rec.dataset.row_filter", input: datasetQuestion("internal", ["dataset.query"]) }
      ])
      expect(batch.map((d) => d.allowed)).toEqual([true, false, true])
      expect(batch[2]?.filters).toEqual([{ field: "classification", operator: "in", value: ["public"] }])
      expect(yield* engine.decideAll([])).toEqual([])

      const superuser = yield* engine.evaluate("rec.mqtt.acl", "superuser", {
        ...datasetQuestion("open", []),
        subject: { ...viewer([]), groups: ["admins"] }
      })
      expect(superuser).toEqual(Option.some(true))

      const status = yield* engine.status
      expect(status).toMatchObject({ loaded: true, fail_open: false })
      expect(status.packages).toContain("rec.mqtt.acl")

      // Audited by the service, with the calling service as source.
      const records = auditSince(from)
      expect(records).toHaveLength(4)
      expect(records.every((r) => r.fields.source_service === "svc-grid")).toBe(true)
    }))

  it.scoped("evaluation errors travel as typed errors", () =>
    Effect.gen(function*() {
      const engine = yield* remoteAs("svc-grid")
      const error = yield* Effect.flip(engine.decide("rec.nothing", datasetQuestion("open", [])))
      expect(error).toMatchObject({ _tag: "PolicyEvaluationError", package: "rec.nothing" })
    }))

  it.scoped("reload needs policy.admin; the service still answers afterwards", () =>
    Effect.gen(function*() {
      const engine = yield* remoteAs("svc-grid")
      const refused = yield* Effect.flip(engine.reload)
      expect(refused).toMatchObject({ _tag: "PolicyAccessDenied" })
      const policy = yield* remoteAs("svc-policy")
      const idp = yield* DevIdp
      // svc-policy is not granted policy.admin in the dev identities, so ask for a token that has it.
      const admin = fixedToken(yield* idp.mint("svc-policy", { scopes: ["policy.admin"] }))
      const server = yield* HttpServer.HttpServer
      const url = `http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}`
      const context = yield* Layer.build(
        Remote.layerWith({ url, scope: Option.none(), timeout: Duration.seconds(5) }, admin).pipe(
          Layer.provide(NodeHttpClient.layerUndici)
        )
      )
      const adminEngine = context.unsafeMap.get(PolicyEngine.key) as PolicyEngine["Type"]
      const reloaded = yield* adminEngine.reload
      expect(reloaded.policy_count).toBeGreaterThan(5)
      expect((yield* policy.decide("rec.dataset.access", datasetQuestion("open", []))).allowed).toBe(true)
    }))

  it.scoped("user tokens and unreachable services fail closed as PolicyUnavailable", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const server = yield* HttpServer.HttpServer
      const url = `http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}`
      const userToken = yield* idp.mint("admin")
      const asUser = fixedToken(userToken)
      const build = (target: string, tokens: ClientCredentials.TokenProvider) =>
        Effect.map(
          Layer.build(
            Remote.layerWith({ url: target, scope: Option.none(), timeout: Duration.seconds(2) }, tokens).pipe(
              Layer.provide(NodeHttpClient.layerUndici)
            )
          ),
          (context) => context.unsafeMap.get(PolicyEngine.key) as PolicyEngine["Type"]
        )
      const user = yield* build(url, asUser)
      const refused = yield* Effect.flip(user.decide("rec.dataset.access", datasetQuestion("open", [])))
      expect(refused._tag).toBe("PolicyUnavailable")
      expect(refused.message).toContain("only service accounts")

      const nowhere = yield* build("http://127.0.0.1:9", asUser)
      const unreachable = yield* Effect.flip(nowhere.decide("rec.dataset.access", datasetQuestion("open", [])))
      expect(unreachable._tag).toBe("PolicyUnavailable")
    }))
})
