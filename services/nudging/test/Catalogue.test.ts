/**
 * The bundled seed, rule by rule, through POST /ingest-event: every rule fires when its facts
 * say so (200) and stays silent when they do not (204), and every template of every rule
 * renders completely in each of its languages. (The original's catalogue had most rules
 * unreachable: empty evaluators, a frequency filter, kinds that were never active.)
 */
import { expect, layer } from "@effect/vitest"
import { type Domain, Seed } from "@rec/nudging-service"
import * as Effect from "effect/Effect"
import { catalogue } from "./fixtures/catalogue.js"
import { bundledSeed, call, freshUser, ingest, serviceLayer, token } from "./support/Service.js"

const seed = Effect.runSync(Seed.load(bundledSeed))
const community = "it-energy-community"

const event = (rule: (typeof seed.rules)[number], user: string, facts: Record<string, unknown>) => ({
  event_type: rule.event_types[0]!,
  user_id: user,
  community_id: community,
  facts: { facts_version: "1.0", scenario: rule.scenarios[0]!, time: "2026-06-10", ...facts }
})

layer(serviceLayer(), { excludeTestServices: true, timeout: "300 seconds" })("catalogue", (it) => {
  it("the fixture table covers every rule of the seed, and only those", () => {
    expect(Object.keys(catalogue).sort()).toEqual(seed.rules.map((r) => r.id).sort())
    expect(seed.rules).toHaveLength(37)
  })

  it.effect("every rule fires on its facts and stays silent otherwise", () =>
    Effect.gen(function*() {
      for (const rule of seed.rules) {
        const cases = catalogue[rule.id]!
        const silent = yield* ingest(event(rule, freshUser(), cases.silent))
        expect(silent.status, `${rule.id} silent: ${JSON.stringify(silent.body)}`).toBe(204)
        const fires = yield* ingest(event(rule, freshUser(), cases.fires))
        expect(fires.status, `${rule.id} fires: ${JSON.stringify(fires.body)}`).toBe(200)
        expect(fires.body).toMatchObject({ outcomes: [{ rule_id: rule.id, outcome: "dispatched" }] })
      }
    }))

  it.effect("every template renders completely in each of its languages", () =>
    Effect.gen(function*() {
      const t = yield* token("svc-nudging")
      let rendered = 0
      for (const rule of seed.rules) {
        const titles = new Map<string, string>()
        for (const language of Object.keys(rule.templates)) {
          const reply = yield* ingest(event(rule, freshUser(), { ...catalogue[rule.id]!.fires, lang: language }))
          expect(reply.status, `${rule.id} ${language}`).toBe(200)
          const id = (reply.body as Domain.IngestDispatched).outcomes[0]!.notification_id!
          const n = (yield* call("GET", `/notifications/${id}`, { token: t })).body as Domain.Notification
          expect(n.language, rule.id).toBe(language)
          for (const text of [n.title, n.body]) {
            expect(text, `${rule.id} ${language}`).not.toMatch(/\{\{|\}\}|undefined|NaN|null|\[object/)
            expect(text.trim().length, `${rule.id} ${language}`).toBeGreaterThan(3)
          }
          titles.set(language, n.title)
          rendered++
        }
        // Each language has its own text, not a copy of the English one.
        for (const [language, title] of titles) {
          if (language !== "en") expect(title, `${rule.id} ${language}`).not.toBe(titles.get("en"))
        }
      }
      expect(rendered).toBeGreaterThanOrEqual(seed.rules.length * 2)
    }))

  it.effect("numbers are written the way each language writes them", () =>
    Effect.gen(function*() {
      const t = yield* token("svc-nudging")
      const rule = seed.rules.find((r) => r.id === "imported_up")!
      const texts: Record<string, string> = {}
      for (const language of ["en", "it", "es", "ca"]) {
        const reply = yield* ingest(event(rule, freshUser(), { delta_pct: 35.25, cur: 1412.5, prev: 1044.4, lang: language }))
        const id = (reply.body as Domain.IngestDispatched).outcomes[0]!.notification_id!
        texts[language] = ((yield* call("GET", `/notifications/${id}`, { token: t })).body as Domain.Notification).title
      }
      expect(texts).toEqual({
        en: "Grid import up 35.3%",
        it: "Prelievo dalla rete +35,3%",
        es: "Consumo de red +35,3%",
        ca: "Consum de xarxa +35,3%"
      })
    }))
})
