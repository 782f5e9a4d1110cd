/**
 * `policies/data.json` against `dev/identities.yaml`, so neither drifts from the other. The
 * identities are taken as the dev identity provider issues them: each one's real token,
 * verified, turned into the policy subject exactly as the service does; decisions come from the
 * repository's policies through the embedded engine.
 *
 * - Every ACL rule is reached, for each of its actions and topic patterns, by an identity that is
 *   not a superuser (brokers skip the ACL for superusers; only the administrators' rule is
 *   theirs), and the rule itself grants it (`granted_by`), not another rule.
 * - Whatever a rule lets someone publish, someone other than a superuser may receive.
 * - Every MQTT capability a service client holds (`mqtt.read`, `mqtt.write`) is used by a rule.
 * - The identities' policy subjects are rendered into `policies/common/dev_identities_test.rego`,
 *   the fixtures of the Rego tests: when the identities change, this test fails until the file is
 *   regenerated (`npx vitest run --project @rec/policy-service test/AclData.test.ts -u`).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Subject } from "@rec/auth"
import { DevIdp } from "@rec/dev-idp"
import { Engines, PolicyEngine, PolicyInput } from "@rec/policy"
import { Inputs } from "@rec/policy-service"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { repoPolicies } from "./helpers.js"

interface Rule {
  readonly id: string
  readonly description: string
  readonly subjects?: { readonly groups?: ReadonlyArray<string>; readonly scopes?: ReadonlyArray<string> }
  readonly topics?: ReadonlyArray<string> | "*"
  readonly actions?: ReadonlyArray<string> | "*"
}

interface AclData {
  readonly capabilities: { readonly scopes: Readonly<Record<string, ReadonlyArray<string>>> }
  readonly rules: ReadonlyArray<Rule>
}

const data = (JSON.parse(fs.readFileSync(path.join(repoPolicies, "data.json"), "utf8")) as { rec: { mqtt: AclData } })
  .rec.mqtt

/** The topic actions of the ACL (`superuser` is asked with `/mqtt/superuser`, not per topic). */
const topicActions = ["subscribe", "read", "publish"] as const

const actionsOf = (rule: Rule): ReadonlyArray<string> =>
  rule.actions === undefined || rule.actions === "*" ? topicActions : rule.actions

const patternsOf = (rule: Rule): ReadonlyArray<string> =>
  rule.topics === undefined || rule.topics === "*" ? ["any/topic"] : rule.topics

/** The administrators' rule: written for superusers, the only rule they may be the ones to reach. */
const forSuperusers = (rule: Rule): boolean =>
  (rule.subjects?.groups ?? []).includes("admins") || (rule.subjects?.scopes ?? []).includes("mqtt.admin")

/** A topic the pattern matches (`+` and `#` filled in). */
const topicMatching = (pattern: string): string =>
  pattern.split("/").map((level) => (level === "+" ? "x" : level === "#" ? "x/y" : level)).join("/")

/**
 * The topic asked about: a subscription asks for the rule's pattern itself (the widest filter
 * the rule grants); a publish or a delivery names a topic the pattern matches.
 */
const topicFor = (action: string, pattern: string): string => action === "subscribe" ? pattern : topicMatching(pattern)

interface Identity {
  /** `svc-grid`, or `viewer via rec-cli`. */
  readonly name: string
  readonly subject: PolicyInput.PolicySubject
  readonly superuser: boolean
}

/** Every identity of dev/identities.yaml: each service account, each user through each login client. */
const identities = Effect.gen(function*() {
  const idp = yield* DevIdp
  const engine = yield* PolicyEngine
  const identity = (name: string, token: string) =>
    Effect.gen(function*() {
      const subject = PolicyInput.subjectOf(Subject.fromClaims(yield* Effect.orDie(idp.verify(token))))
      const question = Inputs.mqttTopic(subject, "acl-data-test", { topic: "#", clientid: "", action: "superuser" })
      const superuser = yield* Effect.orDie(engine.evaluate(question.package, "superuser", question.input))
      return { name, subject, superuser: Option.getOrElse(superuser, () => false) === true } satisfies Identity
    })
  const out: Array<Identity> = []
  const loginClients = [...idp.identities.clients.values()].filter((c) =>
    c.grants.includes("password") || c.grants.includes("authorization_code")
  )
  for (const user of idp.identities.users.values()) {
    for (const client of loginClients) {
      const token = yield* Effect.orDie(idp.mint(user.username, { client: client.clientId }))
      out.push(yield* identity(`${user.username} via ${client.clientId}`, token))
    }
  }
  for (const client of idp.identities.clients.values()) {
    if (!client.grants.includes("client_credentials")) continue
    out.push(yield* identity(client.clientId, yield* Effect.orDie(idp.mint(client.clientId))))
  }
  return out
})

/** Whether `identity` may `action` on `topic`, and the ids of the rules that grant it. */
const ask = (identity: Identity, action: string, topic: string) =>
  Effect.gen(function*() {
    const engine = yield* PolicyEngine
    const question = Inputs.mqttTopic(identity.subject, "acl-data-test", { topic, clientid: "acl-data-test", action })
    const decision = yield* Effect.orDie(engine.decide(question.package, question.input))
    const granted = yield* Effect.orDie(engine.evaluate(question.package, "granted_by", question.input))
    const ids = Option.getOrElse(granted, () => [] as ReadonlyArray<unknown>)
    return { allowed: decision.allowed, grantedBy: Array.isArray(ids) ? (ids as ReadonlyArray<unknown>) : [] }
  })

/** The first identity of `candidates` that may `action` on `topic` through `rule` (any rule when omitted). */
const firstAllowed = (candidates: ReadonlyArray<Identity>, action: string, topic: string, rule?: Rule) =>
  Effect.gen(function*() {
    for (const identity of candidates) {
      const answer = yield* ask(identity, action, topic)
      if (answer.allowed && (rule === undefined || answer.grantedBy.includes(rule.id))) return Option.some(identity)
    }
    return Option.none<Identity>()
  })

const newline = (indent: number) => "\n" + "\t".repeat(indent)

/**
 * A Rego object literal: keys one per line down to the subjects (`depth` levels), each subject
 * field on one line, so a changed scope shows as a one-line diff.
 */
const render = (value: Readonly<Record<string, unknown>>, indent: number, depth: number): string => {
  const entries = Object.entries(value).map(([key, inner]) =>
    `${JSON.stringify(key)}: ${
      depth === 0 ? JSON.stringify(inner) : render(inner as Record<string, unknown>, indent + 1, depth - 1)
    }`
  )
  return `{${newline(indent + 1)}${entries.join(`,${newline(indent + 1)}`)}${newline(indent)}}`
}

const TestLive = Layer.merge(DevIdp.layerTest, Engines.embeddedWith({ directory: repoPolicies, watch: false }))

describe("policies/data.json", () => {
  it("every rule has a unique id and a description", () => {
    for (const rule of data.rules) {
      expect(rule.id, JSON.stringify(rule)).toMatch(/^[a-z0-9-]+$/)
      expect(rule.description, rule.id).toMatch(/\S/)
    }
    const ids = data.rules.map((r) => r.id)
    expect(new Set(ids).size).toBe(ids.length)
  })
})

layer(TestLive, { excludeTestServices: true, timeout: "120 seconds" })("ACL rules and dev identities", (it) => {
  it.effect("every rule is reached by an identity it is written for, for each action and topic", () =>
    Effect.gen(function*() {
      const everyone = yield* identities
      const unreachable: Array<string> = []
      for (const rule of data.rules) {
        const candidates = forSuperusers(rule) ? everyone : everyone.filter((i) => !i.superuser)
        for (const action of actionsOf(rule)) {
          for (const pattern of patternsOf(rule)) {
            const topic = topicFor(action, pattern)
            if (Option.isNone(yield* firstAllowed(candidates, action, topic, rule))) {
              unreachable.push(`${rule.id}: no identity of dev/identities.yaml may ${action} ${topic} by this rule`)
            }
          }
        }
      }
      expect(unreachable).toEqual([])
    }))

  it.effect("whatever a rule lets someone publish, someone other than a superuser may subscribe to and receive", () =>
    Effect.gen(function*() {
      const everyone = yield* identities
      const readers = everyone.filter((i) => !i.superuser)
      const unheard: Array<string> = []
      for (const rule of data.rules.filter((r) => !forSuperusers(r) && actionsOf(r).includes("publish"))) {
        for (const pattern of patternsOf(rule)) {
          const topic = topicMatching(pattern)
          // Subscribing to the topic itself is the narrowest filter that receives it.
          for (const action of ["subscribe", "read"]) {
            if (Option.isNone(yield* firstAllowed(readers, action, topic))) {
              unheard.push(`${rule.id}: ${topic} is published, but nobody but a superuser may ${action} it`)
            }
          }
        }
      }
      expect(unheard).toEqual([])
    }))

  it.effect("every MQTT capability of a service client is used by a rule", () =>
    Effect.gen(function*() {
      const everyone = yield* identities
      const idle: Array<string> = []
      for (const identity of everyone.filter((i) => i.subject.type === "service" && !i.superuser)) {
        for (const scope of identity.subject.scopes) {
          for (const action of data.capabilities.scopes[scope] ?? []) {
            let used = false
            for (const rule of data.rules.filter((r) => actionsOf(r).includes(action))) {
              for (const pattern of patternsOf(rule)) {
                if ((yield* ask(identity, action, topicFor(action, pattern))).allowed) used = true
              }
            }
            if (!used) idle.push(`${identity.name} holds ${scope}, but no rule lets it ${action} anything`)
          }
        }
      }
      expect(idle).toEqual([])
    }))

  it.effect("the Rego tests' identity fixtures are what dev/identities.yaml issues", () =>
    Effect.gen(function*() {
      const everyone = yield* identities
      const users: Record<string, Record<string, unknown>> = {}
      const services: Record<string, unknown> = {}
      for (const identity of everyone) {
        // Claims are left out: they carry exp/iat/jti, and the other fields come from them.
        const { claims: _claims, ...subject } = identity.subject
        const [username, client] = identity.name.split(" via ")
        if (client === undefined) services[identity.name] = subject
        else (users[username!] ??= {})[client] = subject
      }
      const text = [
        "# GENERATED by services/policy/test/AclData.test.ts from dev/identities.yaml: do not edit.",
        "# After changing the identities: npx vitest run --project @rec/policy-service test/AclData.test.ts -u",
        "#",
        "# The policy subjects the dev identity provider's tokens give (as @rec/auth and @rec/policy build",
        "# them, without `claims`): services from their client_credentials token, users through each",
        "# client they can log in with (`users[name][client]`).",
        "package rec.common.dev_identities_test",
        "",
        `users := ${render(users, 0, 2)}`,
        "",
        `services := ${render(services, 0, 1)}`,
        ""
      ].join("\n")
      yield* Effect.promise(() =>
        expect(text).toMatchFileSnapshot(path.join(repoPolicies, "common", "dev_identities_test.rego"))
      )
    }))
})
