import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { describe, expect, it } from "@effect/vitest"
import { Embedded, PolicyEngine, RegoCompiler } from "@rec/policy"
import { Tracing } from "@rec/platform"
import type { PolicyInput } from "@rec/policy/PolicyInput"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const userPolicy = `package test.users

default allow := false

allow if input.subject.type == "user"

reason := "the subject is a user" if allow

reason := "only users may" if not allow
`

const openPolicy = `package test.users

allow := true

reason := "everyone may"
`

const filterPolicy = `package test.rows

default allow := true

reason := "rows"

filters := [{"field": "organization_id", "operator": "eq", "value": input.subject.id}]
`

/** A policy directory in a temporary folder, removed afterwards. */
const tempPolicies = (files: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-policy-"))
      for (const [name, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
        fs.writeFileSync(path.join(dir, name), text)
      }
      return dir
    }),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

const engineOver = (directory: string, options: Partial<Embedded.EmbeddedOptions> = {}) =>
  Effect.flatMap(
    Layer.build(
      Embedded.layerWith({ ...Embedded.defaults, watch: false, ...options, directory }).pipe(
        Layer.provide(RegoCompiler.layerWith())
      )
    ),
    (context) => Effect.succeed(context.unsafeMap.get(PolicyEngine.key) as PolicyEngine["Type"])
  )

const subject = (type: "user" | "service", id = "u-1") => ({
  id,
  type,
  groups: [],
  scopes: [],
  organizations: [],
  claims: { sub: id, exp: 1, iat: 1, jti: id }
})

const question = (type: "user" | "service", requestId = "r-1"): PolicyInput => ({
  subject: subject(type),
  resource: { type: "thing", id: "t-1", attributes: {} },
  action: { name: "read", context: {} },
  environment: { request_id: requestId, timestamp: Date.now() / 1000 }
})

describe("Embedded PolicyEngine", () => {
  it.scoped("decides allow and reason, and reports what is loaded", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({ "users/policy.rego": userPolicy, "users/policy_test.rego": "this is not rego" })
      const engine = yield* engineOver(dir)
      expect(yield* engine.decide("test.users", question("user"))).toEqual({
        allowed: true,
        reason: "the subject is a user",
        package: "test.users",
        cached: false
      })
      const denied = yield* engine.decide("test.users", question("service"))
      expect(denied).toMatchObject({ allowed: false, reason: "only users may" })
      const status = yield* engine.status
      // The broken *_test.rego file is never served, so it does not stop loading.
      expect(status).toMatchObject({ loaded: true, policy_count: 1, packages: ["test.users"], fail_open: false })
      expect(status.last_load_error).toBeUndefined()
    }))

  it.scoped("caches decisions by stable input, and counts hits and misses", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({ "policy.rego": userPolicy })
      const engine = yield* engineOver(dir)
      const first = yield* engine.decide("test.users", question("user", "r-1"))
      const second = yield* engine.decide("test.users", question("user", "r-2"))
      expect(first.cached).toBe(false)
      expect(second).toEqual({ ...first, cached: true })
      expect((yield* engine.status).cache).toMatchObject({ enabled: true, hits: 1, misses: 1, size: 1 })
    }))

  it.scoped("without a cache every decision is evaluated", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({ "policy.rego": userPolicy })
      const engine = yield* engineOver(dir, { cache: { enabled: false, maxSize: 10, ttl: Duration.seconds(10) } })
      yield* engine.decide("test.users", question("user"))
      expect((yield* engine.decide("test.users", question("user"))).cached).toBe(false)
      expect((yield* engine.status).cache).toMatchObject({ enabled: false, hits: 0 })
    }))

  it.scoped("a broken file keeps the last good set, reports the error, and a fix swaps in", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({ "policy.rego": userPolicy })
      const engine = yield* engineOver(dir)
      yield* engine.decide("test.users", question("service"))

      fs.writeFileSync(path.join(dir, "broken.rego"), "package test.broken\n\nallow if {\n")
      const failure = yield* Effect.flip(engine.reload)
      if (failure._tag !== "PolicyLoadError") return expect.fail(`expected a load error, got ${failure._tag}`)
      expect(failure.problems[0]?.file).toBe("broken.rego")
      expect(failure.problems[0]?.row).toBeGreaterThan(0)
      // Still the previous set: never failing open, never failing everything.
      expect(yield* engine.decide("test.users", question("service"))).toMatchObject({ allowed: false })
      const degraded = yield* engine.status
      expect(degraded).toMatchObject({ loaded: true, policy_count: 1 })
      expect(degraded.last_load_error?.problems[0]?.file).toBe("broken.rego")

      fs.rmSync(path.join(dir, "broken.rego"))
      fs.writeFileSync(path.join(dir, "policy.rego"), openPolicy)
      expect(yield* engine.reload).toEqual({ policy_count: 1, packages: ["test.users"] })
      const status = yield* engine.status
      expect(status.last_load_error).toBeUndefined()
      // The swap cleared the cache: the service is now allowed by the new rules.
      expect(status.cache.size).toBe(0)
      expect(yield* engine.decide("test.users", question("service"))).toMatchObject({
        allowed: true,
        reason: "everyone may",
        cached: false
      })
    }))

  it.scoped("fails closed while nothing is loaded", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({ "policy.rego": "package test.users\n\nallow if {" })
      const engine = yield* engineOver(dir)
      const error = yield* Effect.flip(engine.decide("test.users", question("user")))
      expect(error._tag).toBe("PolicyUnavailable")
      const status = yield* engine.status
      expect(status.loaded).toBe(false)
      expect(status.last_load_error?.message).toContain("policy.rego")

      fs.writeFileSync(path.join(dir, "policy.rego"), userPolicy)
      yield* engine.reload
      expect((yield* engine.decide("test.users", question("user"))).allowed).toBe(true)
    }))

  it.scoped("fails open only with the explicit opt-in", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({})
      const engine = yield* engineOver(dir, { failOpen: true })
      const decision = yield* engine.decide("test.users", question("service"))
      expect(decision.allowed).toBe(true)
      expect(decision.reason).toContain("POLICY_FAIL_OPEN")
      expect((yield* engine.status).fail_open).toBe(true)
    }))

  it.scoped("unknown packages, non-boolean allow and conflicting reasons are errors, not answers", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({
        "policy.rego": userPolicy,
        "weird.rego": `package test.weird

allow := "yes"
`,
        "conflict.rego": `package test.conflict

default allow := false

reason := "first" if input.subject

reason := "second" if input.subject
`
      })
      const engine = yield* engineOver(dir)
      const unknown = yield* Effect.flip(engine.decide("test.nothing", question("user")))
      expect(unknown).toMatchObject({ _tag: "PolicyEvaluationError", package: "test.nothing" })
      const weird = yield* Effect.flip(engine.decide("test.weird", question("user")))
      expect(weird.message).toContain("must be a boolean")
      const conflict = yield* Effect.flip(engine.decide("test.conflict", question("user")))
      expect(conflict._tag).toBe("PolicyEvaluationError")
      expect(conflict.message).toContain("eval_conflict_error")
      expect(conflict.message).toContain("conflict.rego:7")
    }))

  it.scoped("returns validated row filters for packages with a filters rule", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({
        "rows.rego": filterPolicy,
        "bad.rego": `package test.bad

allow := true

filters := [{"field": "x", "operator": "like", "value": "%"}]
`
      })
      const engine = yield* engineOver(dir)
      expect(yield* engine.decide("test.rows", question("user"))).toMatchObject({
        allowed: true,
        filters: [{ field: "organization_id", operator: "eq", value: "u-1" }]
      })
      const bad = yield* Effect.flip(engine.decide("test.bad", question("user")))
      expect(bad.message).toContain("filters")
    }))

  it.scoped("evaluates other rules on request", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({ "policy.rego": userPolicy })
      const engine = yield* engineOver(dir)
      expect(yield* engine.evaluate("test.users", "allow", question("user"))).toEqual(Option.some(true))
      expect(yield* engine.evaluate("test.users", "missing", question("user"))).toEqual(Option.none())
    }))

  it.scoped("places data files at their directory path", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({
        "data.json": JSON.stringify({ test: { limits: { max: 3 } } }),
        "test/names/data.yaml": "users: [alice, bob]\n",
        "policy.rego": `package test.data

allow if input.subject.id in data.test.names.users

max := data.test.limits.max
`
      })
      const engine = yield* engineOver(dir)
      const alice = { ...question("user"), subject: subject("user", "alice") }
      expect(yield* engine.decide("test.data", alice)).toMatchObject({ allowed: true })
      expect(yield* engine.evaluate("test.data", "max", alice)).toEqual(Option.some(3))
    }))

  it.live("the file watcher reloads after changes", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({ "policy.rego": userPolicy })
      const engine = yield* engineOver(dir, { watch: true, watchDebounce: Duration.millis(50) })
      expect((yield* engine.decide("test.users", question("service"))).allowed).toBe(false)
      fs.writeFileSync(path.join(dir, "policy.rego"), openPolicy)
      const decision = yield* engine.decide("test.users", question("service")).pipe(
        Effect.filterOrFail((d) => d.allowed, () => "still the old policy"),
        Effect.retry(Schedule.spaced(Duration.millis(25))),
        Effect.timeout(Duration.seconds(5))
      )
      expect(decision.reason).toBe("everyone may")
    }).pipe(Effect.scoped))

  it.scoped("a reload does not disturb decisions in flight (the swap is one assignment)", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({ "policy.rego": userPolicy })
      const engine = yield* engineOver(dir, { cache: { enabled: false, maxSize: 0, ttl: Duration.zero } })
      const results = yield* Effect.all(
        [
          ...Array.from({ length: 50 }, () => engine.decide("test.users", question("user"))),
          engine.reload,
          ...Array.from({ length: 50 }, () => engine.decide("test.users", question("user")))
        ],
        { concurrency: "unbounded" }
      )
      expect(results.filter((r) => "allowed" in r && r.allowed === true)).toHaveLength(100)
      expect(Exit.isSuccess(yield* Effect.exit(engine.status))).toBe(true)
    }))
})

describe("Embedded PolicyEngine tracing", () => {
  const exporter = new InMemorySpanExporter()
  const decisionSpans = () => exporter.getFinishedSpans().filter((s) => s.name === "PolicyEngine.decide")

  it.scoped("a span per decision when spans are exported", () =>
    Effect.gen(function*() {
      const dir = yield* tempPolicies({ "policy.rego": userPolicy })
      const engine = yield* engineOver(dir)
      yield* engine.decide("test.users", question("user"))
      expect(decisionSpans()).toHaveLength(1)
      expect(decisionSpans()[0]?.attributes).toMatchObject({
        "policy.package": "test.users",
        "policy.resource.type": "thing",
        "policy.allowed": true,
        "policy.cached": false
      })
    }).pipe(Effect.provide(Tracing.layerSpanProcessor({ name: "test", version: "0" }, new SimpleSpanProcessor(exporter)))))
})
