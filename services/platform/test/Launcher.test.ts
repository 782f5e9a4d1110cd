/**
 * The launcher starts the dev identity provider, the policy service, the digital-twin simulator
 * and the embedded MQTT broker in one process, wired to each other: a token from the identity
 * provider is accepted by the policy service, and by the broker through the policy service.
 */
import { expect, layer, vi } from "@effect/vitest"
import { Banner, Launcher } from "@rec/launcher"
import { Effect, Layer } from "effect"
import * as Mqtt from "mqtt"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const [idpPort, policyPort, twinPort, mqttPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()])

const options: Launcher.LauncherOptions = {
  idp: { port: idpPort, host: "127.0.0.1" },
  ports: { policy: policyPort, digitalTwin: twinPort, mqtt: mqttPort },
  embeddedBroker: true,
  policiesDir: path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../policies"),
  // Only what the test says: the machine's environment must not leak in.
  environment: { LOG_LEVEL: "warn" }
}

const token = (username: string) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${idpPort}/protocol/openid-connect/token`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from("rec-cli:dev-only-secret-rec-cli").toString("base64")}` },
      body: new URLSearchParams({ grant_type: "password", username, password: username })
    })
    return ((await response.json()) as { access_token: string }).access_token
  })

layer(Launcher.layer(options).pipe(Layer.orDie), { excludeTestServices: true, timeout: "60 seconds" })("launcher", (it) => {
  it.effect("every component is up and trusts the dev identity provider", () =>
    Effect.gen(function*() {
      const viewer = yield* token("viewer")
      const health = yield* Effect.promise(() => fetch(`http://127.0.0.1:${policyPort}/health`).then((r) => r.json()))
      expect(health).toMatchObject({ status: "healthy", policies_loaded: true })
      const decision = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${policyPort}/dataset/access`, {
          method: "POST",
          headers: { authorization: `Bearer ${viewer}`, "content-type": "application/json" },
          body: JSON.stringify({ dataset_id: "meters-2024", access_level: "internal", action: "read" })
        }).then((r) => r.json())
      )
      expect(decision).toMatchObject({ allowed: true })
      // The simulator serves a network's data to its operator.
      const operator = yield* token("dso-operator")
      const twin = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${twinPort}/grid/dso-alto-garda/summary`, { headers: { authorization: `Bearer ${operator}` } })
      )
      expect(twin.status).toBe(200)
    }))

  it.effect("the embedded broker asks the policy service", () =>
    Effect.gen(function*() {
      const viewer = yield* token("viewer")
      const client = yield* Effect.acquireRelease(
        Effect.promise(() =>
          Mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { clientId: "launcher-test", username: "", password: viewer, reconnectPeriod: 0 })
        ),
        (c) => Effect.promise(() => c.endAsync(true))
      )
      const granted = yield* Effect.promise(() => client.subscribeAsync("rec/telemetry/+/+/readings"))
      expect(granted[0]?.qos).toBe(0)
      const refused = yield* Effect.flip(
        Effect.tryPromise(() => Mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { password: "nope", username: "", reconnectPeriod: 0 }))
      )
      expect(String(refused.cause)).toMatch(/Bad username or password|Not authorized/i)
    }).pipe(Effect.scoped))

  it("the banner says where everything is and how to call the policy service", () => {
    const text = Banner.text(
      {
        idp: { issuer: `http://127.0.0.1:${idpPort}`, tokenEndpoint: `http://127.0.0.1:${idpPort}/protocol/openid-connect/token` } as never,
        options,
        skipped: new Map()
      },
      Launcher.components
    )
    expect(text).toContain(`http://localhost:${policyPort}`)
    expect(text).toContain(`mqtt://127.0.0.1:${mqttPort}`)
    expect(text).toContain(`PLATFORM_OIDC_BASE_URL=http://127.0.0.1:${idpPort} node packages/dev-idp/bin/dev-token.js viewer`)
    expect(text).toContain(`curl -s -X POST http://localhost:${policyPort}/dataset/access`)
    const withoutBroker = Banner.text(
      { idp: { issuer: "http://localhost:8080", tokenEndpoint: "t" } as never, options, skipped: new Map([["MQTT broker (embedded)", "port 1883 taken"]]) },
      Launcher.components
    )
    expect(withoutBroker).toContain("not started: port 1883 taken")
    expect(withoutBroker).toContain("node packages/dev-idp/bin/dev-token.js viewer")
  })

  it.effect("the banner is rendered when it is built, so it knows which components were left out", () =>
    Effect.gen(function*() {
      const printed: Array<string> = []
      const spy = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
        printed.push(args.map(String).join(" "))
      })
      const context: Launcher.Context = {
        idp: { issuer: "http://localhost:8080", tokenEndpoint: "t" } as never,
        options,
        skipped: new Map()
      }
      const banner = Banner.layer(context, Launcher.components)
      // A component fails after the banner layer was defined but before it is built.
      context.skipped.set("MQTT broker (embedded)", "port 1883 taken")
      yield* Layer.build(banner).pipe(Effect.scoped, Effect.ensuring(Effect.sync(() => spy.mockRestore())))
      expect(printed.join("\n")).toContain("not started: port 1883 taken")
      expect(printed.join("\n")).not.toContain(`mqtt://127.0.0.1:${mqttPort}`)
    }))
})
