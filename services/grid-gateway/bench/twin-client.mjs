#!/usr/bin/env node
// The digital twin's typed client alone, in this process, against the simulator in its own:
// CPU time per call with Effect's undici client (`OutboundHttp.layer`) and with the gateway's
// lean client (`TwinHttp.outboundLayer`), measured in alternating blocks so that the machine's
// load falls on both (docs/performance.md, "Grid gateway"). Needs a build.
//
//   node services/grid-gateway/bench/twin-client.mjs [--calls 1500] [--rounds 5] [--only lean|effect] [--op summary|risks]
//
// Lives in the service's folder so that its imports resolve to the service's dependencies.
import { ClientCredentials } from "@rec/auth"
import { DigitalTwinClient } from "@rec/digital-twin"
import { OutboundHttp } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { parseArgs } from "node:util"
import { freePort, startProcess, stopAll, waitFor } from "../../../bench/lib/processes.mjs"
import * as TwinHttp from "../dist/TwinHttp.js"

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "1500" },
    rounds: { type: "string", default: "5" },
    only: { type: "string" },
    op: { type: "string" }
  }
})

const idpPort = await freePort()
const issuer = `http://127.0.0.1:${idpPort}`
startProcess("packages/dev-idp/dist/main.js", { env: { PORT: String(idpPort), HOST: "127.0.0.1", DEV_IDP_ISSUER: issuer, LOG_LEVEL: "warn" } })
await waitFor(`${issuer}/health`)
const twinPort = await freePort()
startProcess("packages/digital-twin/dist/simulator/main.js", {
  env: { PORT: String(twinPort), HOST: "127.0.0.1", PLATFORM_OIDC_BASE_URL: issuer, PLATFORM_OIDC_AUDIENCE: "rec-platform", LOG_LEVEL: "warn" }
})
const baseUrl = `http://127.0.0.1:${twinPort}`
await waitFor(`${baseUrl}/ready`)

/** The typed client as the gateway builds it (svc-grid's client credentials), on `http`. */
const twin = (http) =>
  Layer.unwrapEffect(Effect.map(
    ClientCredentials.make({
      issuer: Option.some(issuer),
      tokenEndpoint: Option.none(),
      clientId: "svc-grid",
      clientSecret: Redacted.make("dev-only-secret-svc-grid"),
      scope: Option.some("dt.read")
    }),
    (tokens) => DigitalTwinClient.layer({ baseUrl, tokens })
  )).pipe(Layer.provide(http))

const variants = Object.entries({ effect: OutboundHttp.layer, lean: TwinHttp.outboundLayer })
  .filter(([name]) => values.only === undefined || name === values.only)
  .map(([name, http]) => [name, ManagedRuntime.make(twin(http))])
const today = new Date().toISOString().slice(0, 10)
const ops = Object.entries({
  summary: (dt) => dt.grid.summary("dso-alto-garda"),
  risks: (dt) => dt.grid.risks("dso-alto-garda", { dates: [today], limit: 10000 })
}).filter(([name]) => values.op === undefined || name === values.op)

const calls = Number(values.calls)
const results = {}
// Round 0 warms up (JIT) and is not counted.
for (let round = 0; round <= Number(values.rounds); round++) {
  for (const [opName, op] of ops) {
    for (const [name, runtime] of round % 2 ? [...variants].reverse() : variants) {
      const n = round === 0 ? 300 : calls
      const before = process.cpuUsage()
      await runtime.runPromise(Effect.flatMap(DigitalTwinClient, (dt) =>
        Effect.forEach(Array.from({ length: n }), () => op(dt), { concurrency: 10, discard: true })))
      const used = process.cpuUsage(before)
      if (round > 0) (results[`${opName}, ${name}`] ??= []).push(Math.round((used.user + used.system) / n))
    }
  }
}
for (const [key, xs] of Object.entries(results)) {
  const sorted = [...xs].sort((a, b) => a - b)
  console.log(`${key.padEnd(16)} CPU µs per call: ${xs.join(" ")} (median ${sorted[sorted.length >> 1]})`)
}
for (const [, runtime] of variants) await runtime.dispose()
stopAll()
process.exit(0)
