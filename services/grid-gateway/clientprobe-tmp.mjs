import { Effect, Layer, Redacted, Option, ManagedRuntime } from "effect"
import { DigitalTwinClient, makeClient } from "@rec/digital-twin"
import { ClientCredentials } from "@rec/auth"
import { OutboundHttp } from "@rec/platform"
import { request } from "/work/wt/grid/node_modules/.pnpm/undici@6.29.1/node_modules/undici/index.js"
const [token, base, issuer] = process.argv.slice(2)
const time = async (name, f, n = 1500) => { for (let i = 0; i < 200; i++) await f(); const t = process.cpuUsage(); const w = Date.now(); for (let i = 0; i < n; i++) await f(); const d = process.cpuUsage(t); console.log(name, ((d.user + d.system) / n).toFixed(1), "µs cpu,", ((Date.now() - w) * 1000 / n).toFixed(0), "µs wall") }
if (!process.env.ONLY_DT) await time("raw undici + JSON.parse", async () => { const r = await request(`${base}/grid/dso-alto-garda/summary`, { headers: { authorization: `Bearer ${token}` } }); JSON.parse(await r.body.text()) })
const rt = ManagedRuntime.make(OutboundHttp.layer)
const program = Effect.gen(function*() {
  const tokens = { token: Effect.succeed(Redacted.make(token)), invalidate: Effect.void, reject: () => Effect.void }
  const dt = yield* makeClient({ baseUrl: base, tokens })
  return dt
})
const dt = await rt.runPromise(program)
import { HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
const rt2 = ManagedRuntime.make(NodeHttpClient.layerUndici)
const client = await rt2.runPromise(HttpClient.HttpClient)
const req = HttpClientRequest.get(`${base}/grid/dso-alto-garda/summary`).pipe(HttpClientRequest.bearerToken(token))
await time("Effect HttpClient (undici) + json", () => rt2.runPromise(Effect.flatMap(client.execute(req), (r) => r.json).pipe(Effect.scoped)), 3000)
const plain = client.pipe(HttpClient.withTracerDisabledWhen(() => true))
await time("Effect HttpClient, tracer off + json", () => rt2.runPromise(Effect.flatMap(plain.execute(req), (r) => r.json).pipe(Effect.scoped)), 3000)
const e = await Effect.runPromise(Effect.either(dt.grid.summary("dso-alto-garda")))
if (e._tag === "Left") { console.log("LEFT", e.left.message) }
await time("DigitalTwinClient.summary", () => rt.runPromise(dt.grid.summary("dso-alto-garda")), 3000)
const today = new Date().toISOString().slice(0, 10)
if (!process.env.ONLY_DT) await time("raw undici risks + JSON.parse", async () => { const r = await request(`${base}/grid/dso-alto-garda/values/risks`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ payload: { dates: [today] } }) }); JSON.parse(await r.body.text()) }, 500)
if (!process.env.ONLY_DT) await time("DigitalTwinClient.risks", () => Effect.runPromise(dt.grid.risks("dso-alto-garda", { dates: [today] })), 500)
process.exit(0)
