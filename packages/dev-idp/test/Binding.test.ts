/**
 * The dev identity provider hands out admin tokens to anyone who knows the public secrets of
 * dev/identities.yaml, so it listens on the loopback interface unless told otherwise.
 *
 * Reachability is probed through 127.0.0.2: on Linux the whole 127.0.0.0/8 is loopback, so a
 * server bound to every interface answers there and one bound to 127.0.0.1 does not. A control
 * server on 0.0.0.0 proves the probe can see a wildcard listener on this machine.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as net from "node:net"
import { devIdpConfig } from "../src/Config.js"
import { DevIdp } from "../src/DevIdp.js"

/** Whether a TCP connection to `host:port` is accepted. */
export const accepts = (host: string, port: number): Promise<boolean> =>
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

const wildcardControl = Effect.acquireRelease(
  Effect.async<net.Server>((resume) => {
    const server = net.createServer((s) => s.destroy())
    server.listen(0, "0.0.0.0", () => resume(Effect.succeed(server)))
  }),
  (server) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

const configFrom = (env: Record<string, string>, standalone: boolean) =>
  Effect.withConfigProvider(devIdpConfig({ standalone }), ConfigProvider.fromJson(env))

describe("bind address", () => {
  it.live("standalone, the IdP binds 127.0.0.1 unless HOST says otherwise", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      expect(idp.host).toBe("127.0.0.1")
      expect(idp.issuer).toBe(`http://localhost:${idp.port}`)
      expect(yield* Effect.promise(() => accepts("127.0.0.2", idp.port))).toBe(false)
      expect((yield* configFrom({ HOST: "0.0.0.0" }, true)).host).toBe("0.0.0.0")
      // Embedded in the launcher, HOST is the launcher's to pass on (DevIdpOptions.host).
      expect((yield* configFrom({ HOST: "0.0.0.0" }, false)).host).toBeUndefined()
    }).pipe(
      Effect.provide(Layer.fresh(DevIdp.layerConfig({ standalone: true }))),
      Effect.withConfigProvider(ConfigProvider.fromJson({ PORT: "0" })),
      Effect.scoped
    ))

  it.live("without a host the provider listens on loopback only, and its issuer says localhost", () =>
    Effect.gen(function*() {
      const control = yield* wildcardControl
      const controlPort = (control.address() as net.AddressInfo).port
      expect(yield* Effect.promise(() => accepts("127.0.0.2", controlPort))).toBe(true)

      const idp = yield* DevIdp
      expect(idp.host).toBe("127.0.0.1")
      expect(idp.issuer).toBe(`http://localhost:${idp.port}`)
      expect(yield* Effect.promise(() => accepts("127.0.0.1", idp.port))).toBe(true)
      expect(yield* Effect.promise(() => accepts("127.0.0.2", idp.port))).toBe(false)
    }).pipe(Effect.provide(Layer.fresh(DevIdp.layer({ port: 0 }))), Effect.scoped))

  it.live("host 0.0.0.0 listens on every interface (when asked for)", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      expect(idp.host).toBe("0.0.0.0")
      expect(idp.issuer).toBe(`http://localhost:${idp.port}`)
      expect(yield* Effect.promise(() => accepts("127.0.0.2", idp.port))).toBe(true)
    }).pipe(Effect.provide(Layer.fresh(DevIdp.layer({ port: 0, host: "0.0.0.0" }))), Effect.scoped))
})
