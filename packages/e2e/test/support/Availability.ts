/**
 * Why the end-to-end tests cannot run here, or `undefined`: PostgreSQL and Mosquitto must answer
 * (under `REC_REQUIRE_SERVICES=1`, as in CI, their absence is a failure, not a skip), and the
 * platform must be built.
 */
import { Testing } from "@rec/db"
import * as net from "node:net"
import { missingBuilds } from "../../src/Platform.js"

const mosquittoSkipReason = (host: string, port: number): Promise<string | undefined> =>
  new Promise((resolve) => {
    const socket = net.connect({ host, port })
    socket.setTimeout(2_000)
    socket.once("connect", () => {
      socket.destroy()
      resolve(undefined)
    })
    const fail = (why: string) => {
      socket.destroy()
      resolve(`Mosquitto at ${host}:${port} is not reachable (${why}); start it with scripts/services.sh`)
    }
    socket.once("timeout", () => fail("timeout"))
    socket.once("error", (error) => fail(error.message))
  })

export const skipReason = async (): Promise<string | undefined> => {
  const postgres = await Testing.postgresSkipReason()
  if (postgres !== undefined) return postgres
  const mosquitto = await mosquittoSkipReason("127.0.0.1", 1883)
  if (mosquitto !== undefined && Testing.servicesRequired()) throw new Error(`${mosquitto} (REC_REQUIRE_SERVICES=1)`)
  if (mosquitto !== undefined) return mosquitto
  const missing = missingBuilds()
  // Not a machine problem: a test run without a build is a mistake, so it fails rather than skips.
  if (missing.length > 0) throw new Error(`the platform is not built (${missing.join(", ")}); run \`pnpm build\` first`)
  return undefined
}
