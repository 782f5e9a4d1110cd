/**
 * Digital twin slow or down, under concurrent load (issue 19 point 2): a twin that accepts
 * requests and never answers makes every call 504 after the gateway's timeout, and the gateway
 * gives the call up (the twin sees the request closed), so waiting requests do not pile up: what
 * is in flight is bounded by rate x timeout and drops to zero after each wave. A twin that is
 * down (connection refused) is 502 at once. Figures are printed as `FIGURE dt-outage: ...`.
 * (Each single failure's status and detail: `UpstreamFailures.test.ts`.)
 */
import { afterAll, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { call, digitalTwinAt, gatewayLayer, tokenOf } from "./support/Gateway.js"

/** A full collection before each heap reading, so the figures compare live objects only. */
v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void

/** A twin that never answers, counting requests it holds open. */
let open = 0
let maxOpen = 0
let received = 0
const hanging = http.createServer((request) => {
  received++
  open++
  maxOpen = Math.max(maxOpen, open)
  request.socket.once("close", () => open--)
})
const listening = new Promise<string>((resolve) =>
  hanging.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(hanging.address() as AddressInfo).port}`)))

afterAll(() => {
  hanging.closeAllConnections()
  hanging.close()
})

const timeoutMs = 800
const slow = digitalTwinAt(Effect.promise(() => listening), { timeout: `${timeoutMs} millis` })

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

/** `n` concurrent GETs of `route`; status and latency of each. */
const wave = (route: string, n: number, token: string) =>
  Effect.forEach(
    Array.from({ length: n }, (_, i) => i),
    () =>
      Effect.gen(function*() {
        const start = Date.now()
        const reply = yield* call("GET", `/api/grid/dso-alto-garda/${route}`, { token })
        return { status: reply.status, ms: Date.now() - start, detail: String(reply.body?.detail ?? "") }
      }),
    { concurrency: "unbounded" }
  )

layer(gatewayLayer({ digitalTwin: slow }), { excludeTestServices: true, timeout: "90 seconds" })("digital twin hanging", (it) => {
  it.effect("every call is 504 after the timeout; the gateway gives the calls up, nothing piles up", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      // Warm up (token from the identity provider, policy engine).
      yield* wave("summary", 1, token)
      gc()
      const heapBefore = process.memoryUsage().heapUsed
      const waves = 3
      const perWave = 50
      const replies: Array<{ status: number; ms: number; detail: string }> = []
      const openAfterWave: Array<number> = []
      const heapAfterWaveMib: Array<number> = []
      for (let w = 0; w < waves; w++) {
        replies.push(...(yield* wave("summary", perWave, token)))
        // The gateway's calls are given up with the timeout: the twin sees them closed.
        yield* Effect.sleep("50 millis").pipe(Effect.repeat({ until: () => open === 0, times: 100 }))
        openAfterWave.push(open)
        gc()
        heapAfterWaveMib.push(Math.round(process.memoryUsage().heapUsed / 2 ** 20))
      }
      gc()
      const heapAfter = process.memoryUsage().heapUsed
      const latencies = replies.map((r) => r.ms)
      const figure = {
        requests: replies.length,
        status_504: replies.filter((r) => r.status === 504).length,
        other: replies.filter((r) => r.status !== 504).length,
        timeout_ms: timeoutMs,
        p50_ms: percentile(latencies, 50),
        p99_ms: percentile(latencies, 99),
        max_ms: percentile(latencies, 100),
        twin_requests_received: received,
        twin_max_open: maxOpen,
        twin_open_after_each_wave: openAfterWave,
        heap_growth_kib: Math.round((heapAfter - heapBefore) / 1024),
        heap_after_each_wave_mib: heapAfterWaveMib
      }
      console.log(`FIGURE dt-outage hanging: ${JSON.stringify(figure)}`)
      expect(figure.other).toBe(0)
      for (const r of replies) expect(r.detail).toMatch(/^Digital twin did not answer summary/)
      // No retry storm: one twin call per request at most (plus the warm-up).
      expect(received).toBeLessThanOrEqual(waves * perWave + 1)
      // Nothing waits longer than the timeout plus generous slack for a loaded machine.
      expect(figure.max_ms).toBeLessThan(timeoutMs + 10_000)
      expect(openAfterWave.every((n) => n === 0)).toBe(true)
      expect(maxOpen).toBeLessThanOrEqual(perWave + 1)
      // Given-up calls leave nothing behind: the heap after the third wave is that of the first.
      expect(heapAfterWaveMib[2]! - heapAfterWaveMib[0]!).toBeLessThan(16)
    }), 120_000)
})

/** A port nothing listens on: connection refused. */
const down = digitalTwinAt(Effect.succeed("http://127.0.0.1:9"))

layer(gatewayLayer({ digitalTwin: down }), { excludeTestServices: true, timeout: "90 seconds" })("digital twin down", (it) => {
  it.effect("every call is 502 at once", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      yield* wave("wind/trend", 1, token)
      const replies = yield* wave("wind/trend", 50, token)
      const latencies = replies.map((r) => r.ms)
      const figure = {
        requests: replies.length,
        status_502: replies.filter((r) => r.status === 502).length,
        p50_ms: percentile(latencies, 50),
        max_ms: percentile(latencies, 100)
      }
      console.log(`FIGURE dt-outage down: ${JSON.stringify(figure)}`)
      expect(figure.status_502).toBe(replies.length)
      for (const r of replies) expect(r.detail).toMatch(/^Digital twin call wind_trend failed: The digital twin is unreachable/)
    }), 120_000)
})
