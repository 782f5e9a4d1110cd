// Micro-benchmark: CPU per QoS 1 publishJson of a commitment announcement on the machine's
// Mosquitto (node bench/flexibility/publish-micro.mjs [count] [concurrency]).
import { createRequire } from "node:module"
import * as path from "node:path"
import { root } from "../lib/processes.mjs"
const req = createRequire(path.join(root, "services/flexibility", "package.json"))
const { Effect } = req("effect")
const { Mqtt, MqttConfig } = await import(path.join(root, "packages/mqtt/dist/index.js"))
const { CommittedEvent } = await import(path.join(root, "services/flexibility/dist/CommittedEvents.js"))
const count = Number(process.argv[2] ?? 20000)
const concurrency = Number(process.argv[3] ?? 20)
const config = MqttConfig.make({ service: "publish-micro", host: "127.0.0.1", port: 1883, topicPrefix: `bench-micro-${process.pid}/` })
const value = (i) => ({
  user_id: `user-${i % 1000}`, community_id: "c", commitment_id: "6f1c1f7e-2f55-4a38-9a57-0b8c0a0d1e2f", suggestion_id: `s-${i}`,
  device_id: "meter", window_start: "2026-11-26T10:00:00.000Z", window_end: "2026-11-26T11:00:00.000Z", reward_points_estimated: 5
})
const program = Effect.gen(function*() {
  const mqtt = yield* Mqtt.Mqtt
  const round = (n) => Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) =>
    mqtt.publishJson(`rec/flexibility/committed/user-${i % 1000}`, CommittedEvent, value(i), { qos: 1 }), { concurrency, discard: true })
  yield* round(2000)
  const cpu0 = process.cpuUsage(); const t0 = Date.now()
  yield* round(count)
  const cpu = process.cpuUsage(cpu0); const ms = Date.now() - t0
  console.log(`${count} publishes: ${Math.round(count / ms * 1000)}/s, CPU ${((cpu.user + cpu.system) / count).toFixed(1)} µs per publish`)
})
await Effect.runPromise(program.pipe(Effect.provide(Mqtt.Mqtt.Default(config)), Effect.scoped))
process.exit(0)
