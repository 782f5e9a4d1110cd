/**
 * The launcher starts the dev identity provider, the policy service, the digital-twin simulator
 * and the embedded MQTT broker in one process, wired to each other: a token from the identity
 * provider is accepted by the policy service, and by the broker through the policy service.
 *
 * Secure by default: every component checks the dev identity provider's audience and refuses
 * tokens that are not access tokens, and everything listens on 127.0.0.1 unless HOST says
 * otherwise. Reachability is probed through 127.0.0.2: on Linux all of 127.0.0.0/8 is loopback,
 * so a server bound to every interface answers there and one bound to 127.0.0.1 does not.
 */
import { expect, layer, vi } from "@effect/vitest"
import { DevIdp } from "@rec/dev-idp"
import { Banner, Config, Launcher } from "@rec/launcher"
import { ConfigProvider, Effect, Layer, Logger } from "effect"
import * as Mqtt from "mqtt"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
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

/** Whether a TCP connection to `host:port` is accepted. */
const accepts = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ host, port })
    socket.setTimeout(2000)
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
    socket.once("timeout", () => {
      socket.destroy()
      resolve(false)
    })
  })

const [idpPort, policyPort, twinPort, mqttPort, mailPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()])
// The services' ports: named in banners and environments, never listened on here (no services start).
const [registry, assistant, participantGateway, gridGateway, nudging, flexibility] = await Promise.all(
  Array.from({ length: 6 }, () => freePort())
)

const options: Launcher.LauncherOptions = {
  host: "127.0.0.1",
  idp: { port: idpPort },
  ports: {
    policy: policyPort,
    digitalTwin: twinPort,
    mqtt: mqttPort,
    mail: mailPort,
    registry,
    assistant,
    participantGateway,
    gridGateway,
    nudging,
    flexibility
  },
  embeddedBroker: true,
  mailCatcher: true,
  // The foundation only: `Platform.test.ts` starts every service.
  services: [],
  seed: false,
  dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "rec-launcher-test-")),
  policiesDir: path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../policies"),
  // Only what the test says: the machine's environment must not leak in.
  environment: { LOG_LEVEL: "warn", RATE_LIMIT_RELOAD: "off" }
}

const tokenResponse = (username: string, scope?: string) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${idpPort}/protocol/openid-connect/token`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from("rec-cli:dev-only-secret-rec-cli").toString("base64")}` },
      body: new URLSearchParams({ grant_type: "password", username, password: username, ...(scope === undefined ? {} : { scope }) })
    })
    return (await response.json()) as { access_token: string; id_token?: string }
  })

const token = (username: string) => Effect.map(tokenResponse(username), (r) => r.access_token)

const post = (port: number, path: string, token: string, body: unknown = {}) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) as Record<string, unknown> }
  })

const mqttConnect = (password: string) =>
  Effect.tryPromise(() =>
    Mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { clientId: `launcher-test-${Math.random()}`, username: "", password, reconnectPeriod: 0 })
  )

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

  it.effect("every component checks the dev identity provider's audience: another audience, or none, is refused", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const admin = yield* idp.mint("admin")
      const foreign = yield* idp.mint("admin", { audience: "another-client" })
      const none = yield* idp.mint("admin", { claims: { aud: undefined } })
      expect((yield* post(policyPort, "/reload", admin)).status).toBe(200)
      expect((yield* post(policyPort, "/mqtt/superuser", admin)).status).toBe(200)
      for (const refused of [foreign, none]) {
        expect((yield* post(policyPort, "/reload", refused)).status).toBe(401)
        expect(yield* post(policyPort, "/mqtt/superuser", refused)).toMatchObject({
          status: 403,
          body: { ok: false, reason: "invalid credentials: Invalid audience" }
        })
        expect((yield* post(policyPort, "/mqtt/user", refused)).status).toBe(403)
        const twin = yield* Effect.promise(() =>
          fetch(`http://127.0.0.1:${twinPort}/grid/dso-alto-garda/summary`, { headers: { authorization: `Bearer ${refused}` } })
        )
        expect(twin.status).toBe(401)
        const error = yield* Effect.flip(mqttConnect(refused))
        expect(String(error.cause ?? error)).toMatch(/Bad username or password|Not authorized/i)
      }
    }))

  it.effect("an ID token is not an access token: /mqtt/user, MQTT connect and decisions refuse it", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      // What the token endpoint gives a user logging in with scope=openid (aud: the client).
      const issued = yield* tokenResponse("admin", "openid")
      expect(issued.id_token).toBeDefined()
      // An ID token that also names the platform's audience (Keycloak's audience mapper can add it):
      // only its type tells it apart.
      const withAudience = yield* idp.mint("admin", { kind: "id", audience: ["rec-cli", idp.audience] })
      expect(yield* post(policyPort, "/mqtt/user", withAudience)).toMatchObject({
        status: 403,
        body: { ok: false, reason: "invalid credentials: Token is not an access token (typ \"ID\")" }
      })
      for (const idToken of [issued.id_token!, withAudience]) {
        expect((yield* post(policyPort, "/mqtt/user", idToken)).status).toBe(403)
        expect((yield* post(policyPort, "/mqtt/superuser", idToken)).status).toBe(403)
        expect((yield* post(policyPort, "/reload", idToken)).status).toBe(401)
        const decision = yield* post(policyPort, "/dataset/access", idToken, {
          dataset_id: "meters-2024",
          access_level: "internal",
          action: "read"
        })
        expect(decision.status).toBe(401)
        const error = yield* Effect.flip(mqttConnect(idToken))
        expect(String(error.cause ?? error)).toMatch(/Bad username or password|Not authorized/i)
      }
      // The access token of the same login is fine.
      expect((yield* post(policyPort, "/mqtt/user", issued.access_token)).status).toBe(200)
    }))

  it.effect("everything listens on 127.0.0.1 only", () =>
    Effect.gen(function*() {
      // Control: a server on every interface is reachable through 127.0.0.2 on this machine.
      const control = yield* Effect.acquireRelease(
        Effect.async<net.Server>((resume) => {
          const server = net.createServer((socket) => socket.destroy())
          server.listen(0, "0.0.0.0", () => resume(Effect.succeed(server)))
        }),
        (server) =>
          Effect.async<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
      expect(yield* Effect.promise(() => accepts("127.0.0.2", (control.address() as net.AddressInfo).port))).toBe(true)
      for (const port of [idpPort, policyPort, twinPort, mqttPort, mailPort]) {
        expect({ port, loopback: yield* Effect.promise(() => accepts("127.0.0.1", port)) }).toEqual({ port, loopback: true })
        expect({ port, other: yield* Effect.promise(() => accepts("127.0.0.2", port)) }).toEqual({ port, other: false })
      }
      const idp = yield* DevIdp
      expect(idp.host).toBe("127.0.0.1")
      // Loopback is still "localhost" to people and to dev-token's default.
      expect(idp.issuer).toBe(`http://localhost:${idpPort}`)
    }).pipe(Effect.scoped))

  it("the banner says where everything is and how to call the policy service", () => {
    const idp = { issuer: `http://localhost:${idpPort}`, tokenEndpoint: `http://localhost:${idpPort}/protocol/openid-connect/token` }
    const text = Banner.text({ idp: idp as never, options, skipped: new Map() }, Launcher.components)
    expect(text).toContain(`http://localhost:${policyPort}`)
    expect(text).toContain(`mqtt://127.0.0.1:${mqttPort}`)
    expect(text).toContain(`PLATFORM_OIDC_BASE_URL=http://localhost:${idpPort} node packages/dev-idp/bin/dev-token.js viewer`)
    expect(text).toContain(`curl -s -X POST http://localhost:${policyPort}/dataset/access`)
    const withoutBroker = Banner.text(
      { idp: { issuer: "http://localhost:8080", tokenEndpoint: "t" } as never, options, skipped: new Map([["MQTT broker (embedded)", "port 1883 taken"]]) },
      Launcher.components
    )
    expect(withoutBroker).toContain("not started: port 1883 taken")
    expect(withoutBroker).toContain("node packages/dev-idp/bin/dev-token.js viewer")
  })

  it("the banner says which interface everything listens on", () => {
    const idp = { issuer: "http://localhost:8080", tokenEndpoint: "t" } as never
    const loopback = Banner.text({ idp, options, skipped: new Map() }, Launcher.components)
    expect(loopback).toContain("Listening on 127.0.0.1 only")
    expect(loopback).toContain("HOST=0.0.0.0")
    const everywhere = Banner.text({ idp, options: { ...options, host: "0.0.0.0" }, skipped: new Map() }, Launcher.components)
    expect(everywhere).toContain("Listening on every interface (HOST=0.0.0.0)")
    expect(everywhere).toContain("anyone who can reach this machine can get admin tokens")
    expect(everywhere).not.toContain("127.0.0.1 only")
    // Addresses for people are still localhost; the broker's 127.0.0.1 (MQTT clients rarely fall back from ::1).
    expect(everywhere).toContain("http://localhost:8080")
    expect(everywhere).toContain(`mqtt://127.0.0.1:${mqttPort}`)
    const lan = Banner.text({ idp, options: { ...options, host: "192.0.2.7" }, skipped: new Map() }, Launcher.components)
    expect(lan).toContain("Listening on 192.0.2.7 (HOST)")
    expect(lan).toContain(`http://192.0.2.7:${policyPort}`)
    expect(lan).toContain(`mqtt://192.0.2.7:${mqttPort}`)
  })

  it("when the MQTT port is taken, the banner says how to fix it", () => {
    const idp = { issuer: "http://localhost:8080", tokenEndpoint: "t" } as never
    const skipped = new Map([[
      Launcher.embeddedBroker.name,
      "the embedded MQTT broker cannot listen: listen EADDRINUSE: address already in use 127.0.0.1:1883"
    ]])
    const text = Banner.text({ idp, options: { ...options, ports: { ...options.ports, mqtt: 1883 } }, skipped }, Launcher.components)
    expect(text).toContain("not started: port 1883 is already in use (a local Mosquitto?)")
    expect(text).toContain("PLATFORM_MQTT_PORT=1884 npm start")
    expect(text).toContain("PLATFORM_MQTT_HOST=localhost npm start")
  })

  it("each component is told the bind address and the dev identity provider's audience; the user's audience wins", () => {
    const idp = { issuer: "http://localhost:8080", audience: "rec-platform" } as never
    const contextWith = (environment: Record<string, string>): Launcher.Context => ({
      idp,
      options: { ...options, environment },
      skipped: new Map()
    })
    for (const component of Launcher.components) {
      const env = Launcher.environmentOf(component, contextWith({ HOST: "10.0.0.1", PORT: "1", LOG_LEVEL: "warn" }))
      // HOST is the launcher's bind address (options.host, which Config reads from HOST), PORT stays hidden.
      expect(env.get("HOST")).toBe("127.0.0.1")
      expect(env.has("PORT")).toBe(false)
      expect(env.get("PLATFORM_OIDC_AUDIENCE")).toBe("rec-platform")
      expect(env.get("PLATFORM_OIDC_BASE_URL")).toBe("http://localhost:8080")
      expect(env.get("LOG_LEVEL")).toBe("warn")
      const own = Launcher.environmentOf(component, contextWith({ PLATFORM_OIDC_AUDIENCE: "my-api" }))
      expect(own.get("PLATFORM_OIDC_AUDIENCE")).toBe("my-api")
    }
  })

  it.effect("the launcher binds 127.0.0.1 unless HOST says otherwise", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.withConfigProvider(Config.launcher, ConfigProvider.fromJson(env))
      expect((yield* read({})).host).toBe("127.0.0.1")
      expect((yield* read({ HOST: "0.0.0.0" })).host).toBe("0.0.0.0")
      // DEV_IDP_* still configure the IdP; its bind address is the launcher's.
      expect((yield* read({ DEV_IDP_PORT: "9090" })).idp.port).toBe(9090)
    }))

  it.effect("a component whose port is taken fails the start and says which variable moves it", () =>
    Effect.gen(function*() {
      const attempt = (taken: Partial<Launcher.LauncherOptions>) =>
        Effect.gen(function*() {
          const lines: Array<string> = []
          const logger = Logger.make(({ message }) => {
            lines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
          })
          const exit = yield* Layer.build(Launcher.layer({ ...options, ...taken })).pipe(
            Effect.scoped,
            Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
            Effect.exit
          )
          return { failed: exit._tag === "Failure", log: lines.join("\n") }
        })
      // The running launcher holds these ports.
      const idp = yield* attempt({ idp: { port: idpPort } })
      expect(idp.failed).toBe(true)
      expect(idp.log).toContain(`port ${idpPort} is already in use: set DEV_IDP_PORT to another port`)
      const [free1, free2, free3] = yield* Effect.promise(() => Promise.all([freePort(), freePort(), freePort()]))
      const policy = yield* attempt({ idp: { port: 0 }, ports: { ...options.ports, policy: policyPort, digitalTwin: free1, mqtt: free2, mail: free3 } })
      expect(policy.failed).toBe(true)
      expect(policy.log).toContain(`port ${policyPort} is already in use: set POLICY_PORT to another port`)
      const twin = yield* attempt({ idp: { port: 0 }, ports: { ...options.ports, policy: free3, digitalTwin: twinPort, mqtt: free2, mail: free1 } })
      expect(twin.failed).toBe(true)
      expect(twin.log).toContain(`port ${twinPort} is already in use: set DIGITAL_TWIN_PORT to another port`)
    }))

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
