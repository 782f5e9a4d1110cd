/**
 * `/dataset/access` and `/dataset/filters` over HTTP with real tokens for every role, checked
 * against the spec's matrix (rules 3) cell by cell: roles × access levels × actions × client
 * scopes, users and service accounts. The expected answers are written here from the spec and
 * the reference, independently of the Rego.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { post, serviceLayer, tokens } from "./helpers.js"

type Level = "open" | "internal" | "restricted"
type Action = "read" | "write" | "admin"
type ScopeSet = "none" | "query" | "admin"

const levels: ReadonlyArray<Level> = ["open", "internal", "restricted"]
const actions: ReadonlyArray<Action> = ["read", "write", "admin"]
const scopeSets: Record<ScopeSet, ReadonlyArray<string>> = {
  none: [],
  query: ["dataset.query"],
  admin: ["dataset.admin"]
}

/** Users by group level: `nogroup` has a token but no group. */
const users = { nogroup: 0, viewer: 1, editor: 2, manager: 3, admin: 4 } as const

/**
 * The matrix for users, as the spec writes it (part 4A, rule 3): open datasets are read by every
 * role and read/written by admins; internal: viewers read*, editors and managers read/write*,
 * admins read/write; restricted: admins read/write*. `*` cells need dataset.query or
 * dataset.admin on the client; cells without it need no client scope. The `admin` action is not
 * in the matrix: admins with dataset.admin (docs/decisions.md).
 */
const userAllowed = (groupLevel: number, scopes: ScopeSet, level: Level, action: Action): boolean => {
  const anyScope = scopes !== "none"
  if (action === "admin") return groupLevel === 4 && scopes === "admin"
  switch (level) {
    case "open":
      return action === "read" || groupLevel === 4
    case "internal":
      return groupLevel === 4 || (groupLevel >= (action === "read" ? 1 : 2) && anyScope)
    case "restricted":
      return groupLevel === 4 && anyScope
  }
}

/** Services act by scope alone. */
const serviceAllowed = (scopes: ScopeSet, level: Level, action: Action): boolean => {
  const admin = scopes === "admin"
  if (action === "admin" || action === "write") return admin
  return level === "open" || (level === "internal" ? scopes !== "none" : admin)
}

/**
 * One reason per denial, precedence: missing client scope > insufficient group or scope. Reading
 * or writing an open dataset never needs a client scope, so there only the group can be missing.
 */
const userDenial = (scopes: ScopeSet, level: Level, action: Action): string =>
  scopes === "none" && (level !== "open" || action === "admin")
    ? "missing dataset scope for requesting client"
    : action === "admin" && scopes !== "admin"
    ? "missing dataset.admin scope for admin"
    : "insufficient group privileges"

layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("dataset decisions", (it) => {
  it.effect("every cell of the matrix for users", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      let cells = 0
      for (const [name, groupLevel] of Object.entries(users)) {
        for (const [scopeName, scopes] of Object.entries(scopeSets) as Array<[ScopeSet, ReadonlyArray<string>]>) {
          const token = yield* mint(name, { scopes })
          for (const level of levels) {
            for (const action of actions) {
              const reply = yield* post("/dataset/access", {
                token,
                json: { dataset_id: "meters-2024", access_level: level, action }
              })
              const allowed = userAllowed(groupLevel, scopeName, level, action)
              const where = `${name} with ${scopeName} scopes, ${action} on ${level}`
              expect(reply.status, where).toBe(200)
              expect(reply.body, where).toMatchObject({ allowed })
              const reason = (reply.body as { reason: string }).reason
              if (allowed) expect(reason, where).not.toBe("")
              else expect(reason, where).toBe(userDenial(scopeName, level, action))
              cells++
            }
          }
        }
      }
      expect(cells).toBe(5 * 3 * 3 * 3)
    }))

  it.effect("every cell of the matrix for service accounts", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      for (const [scopeName, scopes] of Object.entries(scopeSets) as Array<[ScopeSet, ReadonlyArray<string>]>) {
        const token = yield* mint("svc-rec-registry", { scopes })
        for (const level of levels) {
          for (const action of actions) {
            const reply = yield* post("/dataset/access", {
              token,
              json: { dataset_id: "meters-2024", access_level: level, action }
            })
            const allowed = serviceAllowed(scopeName, level, action)
            const where = `service with ${scopeName} scopes, ${action} on ${level}`
            expect(reply.body, where).toMatchObject({ allowed })
            if (!allowed) expect((reply.body as { reason: string }).reason, where).toBe("insufficient scope privileges")
          }
        }
      }
    }))

  it.effect("the reasons of granted cells are the reference's strings", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const reasonOf = (name: string, scopes: ReadonlyArray<string>, level: Level, action: Action) =>
        Effect.flatMap(mint(name, { scopes }), (token) =>
          post("/dataset/access", { token, json: { dataset_id: "d", access_level: level, action } })).pipe(
            Effect.map((r) => (r.body as { reason: string }).reason)
          )
      expect(yield* reasonOf("viewer", [], "open", "read")).toBe("open datasets are publicly readable")
      expect(yield* reasonOf("viewer", ["dataset.query"], "internal", "read")).toBe(
        "user has viewer access and client has dataset.query scope"
      )
      expect(yield* reasonOf("editor", ["dataset.admin"], "internal", "write")).toBe(
        "user has editor access and client has dataset.admin scope"
      )
      expect(yield* reasonOf("admin", ["dataset.admin"], "restricted", "write")).toBe(
        "user has admin access and client has dataset.admin scope"
      )
      expect(yield* reasonOf("admin", ["dataset.admin"], "internal", "admin")).toBe("admin action authorized")
      // Cells without an asterisk: admins write open and internal datasets with no client scope.
      expect(yield* reasonOf("admin", [], "open", "write")).toBe("user has admin access")
      expect(yield* reasonOf("admin", [], "internal", "write")).toBe("user has admin access")
      // Asterisk cells: dataset.query is enough, for writes too.
      expect(yield* reasonOf("editor", ["dataset.query"], "internal", "write")).toBe(
        "user has editor access and client has dataset.query scope"
      )
      expect(yield* reasonOf("admin", ["dataset.query"], "restricted", "write")).toBe(
        "user has admin access and client has dataset.query scope"
      )
      expect(yield* reasonOf("svc-rec-registry", ["dataset.query"], "internal", "read")).toBe(
        "service has dataset.query scope"
      )
      expect(yield* reasonOf("svc-rec-registry", ["dataset.admin"], "restricted", "read")).toBe(
        "service has dataset.admin scope for restricted access"
      )
    }))

  it.effect("action defaults to read", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("viewer", { scopes: ["dataset.query"] }))
      const reply = yield* post("/dataset/access", { token, json: { dataset_id: "d", access_level: "internal" } })
      expect(reply.body).toMatchObject({ allowed: true, reason: "user has viewer access and client has dataset.query scope" })
    }))

  it.effect("row filters: access first, then the classification and organization filters", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const filters = (name: string, scopes: ReadonlyArray<string> | undefined, level: Level) =>
        Effect.flatMap(mint(name, scopes === undefined ? {} : { scopes }), (token) =>
          post("/dataset/filters", { token, json: { dataset_id: "meters-2024", access_level: level } }))
      const classification = (value: ReadonlyArray<string>) => ({ field: "classification", operator: "in", value })

      // Denied access: no filters, the access policy's reason.
      const denied = yield* filters("viewer", [], "internal")
      expect(denied.status).toBe(200)
      expect(denied.body).toMatchObject({
        allowed: false,
        filters: [],
        reason: "missing dataset scope for requesting client"
      })
      expect(typeof (denied.body as { request_id: string }).request_id).toBe("string")
      expect((yield* filters("manager", ["dataset.query"], "restricted")).body).toMatchObject({ allowed: false, filters: [] })

      // Internal datasets: the allowed classifications (group ∩ client scope), sorted.
      const cases: ReadonlyArray<[string, ReadonlyArray<string>, ReadonlyArray<unknown>]> = [
        ["viewer", ["dataset.query"], [classification(["public"])]],
        ["viewer", ["dataset.admin"], [classification(["public"])]],
        ["editor", ["dataset.query"], [classification(["internal", "public"])]],
        ["editor", ["dataset.admin"], [classification(["internal", "public"])]],
        ["manager", ["dataset.query"], [classification(["internal", "public"])]],
        ["manager", ["dataset.admin"], []],
        ["admin", [], [classification(["public"])]],
        ["admin", ["dataset.admin"], []],
        ["svc-rec-registry", ["dataset.query"], [classification(["internal", "public"])]],
        ["svc-rec-registry", ["dataset.admin"], []]
      ]
      for (const [name, scopes, expected] of cases) {
        const reply = yield* filters(name, scopes, "internal")
        expect(reply.body, `${name} ${scopes.join(",")}`).toMatchObject({ allowed: true, filters: expected })
      }
      // Open and restricted datasets get no classification filter.
      expect((yield* filters("admin", ["dataset.admin"], "restricted")).body).toMatchObject({ allowed: true, filters: [] })
      expect((yield* filters("viewer", [], "open")).body).toMatchObject({ allowed: true, filters: [] })

      // Organization members see their organization's rows only.
      expect((yield* filters("dso-operator", undefined, "open")).body).toMatchObject({
        allowed: true,
        filters: [{ field: "organization_id", operator: "eq", value: "dso-alto-garda" }]
      })
      expect((yield* filters("dso-multi", undefined, "open")).body).toMatchObject({
        allowed: true,
        filters: [{ field: "organization_id", operator: "in", value: ["dso-alto-garda", "dso-valsugana"] }]
      })
    }))
})
