// The broker `run.mjs` measures, one per process: `@rec/mqtt`'s embedded broker (aedes) on PORT,
// configured from the environment:
//
// - CHECKS=off: deliveries are not checked (`checkDeliveries: false`), the baseline;
// - CHECKS=on: every delivery is checked through `authorizeRead`, its decisions reused for
//   READ_TTL_MS per connection and topic (default 5000, the broker's default; 0 asks for every
//   delivery);
// - POLICY_URL set: the broker asks the policy service there (`@rec/policy-service`'s BrokerAuth,
//   as `npm start` wires it); unset: an in-process authorizer that allows everything, which
//   isolates the broker's own cost of a check.
//
// Needs a build of packages/mqtt (and services/policy for POLICY_URL). Logs warnings only.
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
// Effect is imported from the package's own dependencies (this script lives outside the
// workspace packages), so the broker and this script share one copy.
const from = (file) => import(pathToFileURL(path.join(root, file)).href)

const { EmbeddedBroker } = await from("packages/mqtt/dist/index.js")
const Duration = await from("packages/mqtt/node_modules/effect/dist/esm/Duration.js")
const Effect = await from("packages/mqtt/node_modules/effect/dist/esm/Effect.js")
const Layer = await from("packages/mqtt/node_modules/effect/dist/esm/Layer.js")
const Logger = await from("packages/mqtt/node_modules/effect/dist/esm/Logger.js")
const LogLevel = await from("packages/mqtt/node_modules/effect/dist/esm/LogLevel.js")

const port = Number(process.env.PORT ?? 0)
const checks = (process.env.CHECKS ?? "on") === "on"
const readTtl = Number(process.env.READ_TTL_MS ?? 5000)
const policyUrl = process.env.POLICY_URL

const auth = policyUrl === undefined || policyUrl === ""
  ? EmbeddedBroker.allowAll
  : (await from("services/policy/dist/BrokerAuth.js")).layer({ url: policyUrl })

const broker = EmbeddedBroker.layer({ port, checkDeliveries: checks, readDecisionTtl: Duration.millis(readTtl) }).pipe(
  Layer.provide(auth),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

Effect.runFork(Layer.launch(broker).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))))
process.on("SIGTERM", () => process.exit(0))
