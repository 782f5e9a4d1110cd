/**
 * Every service of the platform with a docs page, each in its own process as in production
 * (`node services/<name>/dist/main.js`, configured by environment variables only), around the
 * infrastructure they expect at start-up, held by the test process:
 *
 * - the development identity provider (`@rec/dev-idp`, real JWKS) on a free port;
 * - the embedded MQTT broker (`@rec/mqtt`) on a free port, accepting every client: the docs
 *   pages need the services up, not the broker's policy decisions;
 * - a fresh PostgreSQL database (one schema per service, as in production) when PostgreSQL
 *   answers, else in-memory PGlite per process. The assistant always runs on PGlite: it needs
 *   pgvector, which the machines' Debian PostgreSQL lacks (design.md).
 *
 * Everything is stopped and the database dropped when the scope closes.
 */
import { Testing } from "@rec/db"
import { DevIdp } from "@rec/dev-idp"
import { EmbeddedBroker } from "@rec/mqtt"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as ServiceProcess from "./ServiceProcess.js"

export const repoRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")

export interface ServiceEntry {
  /** Short name, used in test names and screenshot files. */
  readonly name: string
  /** Compiled entry point, relative to the repository root. */
  readonly entry: string
  /**
   * Where `/openapi.json`, `/docs` and `/redoc` live (the service's `docsPrefix`, README). Checked
   * against the Swagger UI address the service logs at start.
   */
  readonly docsPrefix: string
  /** Needs vectors: PGlite even when PostgreSQL is available. */
  readonly pgvector?: boolean | undefined
  /** Starts without a database. */
  readonly noDatabase?: boolean | undefined
  readonly env?: ((context: { readonly scratch: string }) => Record<string, string>) | undefined
}

/** The services with docs pages (design.md's port table), in start order. */
export const services: ReadonlyArray<ServiceEntry> = [
  { name: "policy", entry: "services/policy/dist/main.js", docsPrefix: "", noDatabase: true },
  { name: "registry", entry: "services/registry/dist/main.js", docsPrefix: "" },
  {
    name: "assistant",
    entry: "services/assistant/dist/main.js",
    docsPrefix: "",
    pgvector: true,
    env: ({ scratch }) => ({
      ASSISTANT_STORAGE_DIR: Path.join(scratch, "assistant/files"),
      TRAINING_MATERIALS_PATH: Path.join(scratch, "assistant/training-materials"),
      TRAINING_MATERIALS_SYNC_ON_START: "false"
    })
  },
  { name: "nudging", entry: "services/nudging/dist/main.js", docsPrefix: "" },
  { name: "flexibility", entry: "services/flexibility/dist/main.js", docsPrefix: "/api" },
  { name: "grid-gateway", entry: "services/grid-gateway/dist/main.js", docsPrefix: "/api" },
  { name: "participant-gateway", entry: "services/participant-gateway/dist/main.js", docsPrefix: "/api" },
  {
    name: "digital-twin-simulator",
    entry: "packages/digital-twin/dist/simulator/main.js",
    docsPrefix: "",
    noDatabase: true
  }
]

export interface RunningService {
  readonly entry: ServiceEntry
  readonly url: string
  /** `<url><docsPrefix>` */
  readonly docsBase: string
  readonly database: "postgresql" | "pglite" | "none"
  readonly startMillis: number
  readonly output: () => string
}

/**
 * What a service inherits from the test process: only what a process needs to run. Everything
 * else (the test runner's `BASE_URL`, `NODE_ENV`, a developer's `DATABASE_URL`, `PLATFORM_*`,
 * `OTEL_*`) would configure it differently from what this module sets.
 */
const inheritedNames = ["PATH", "HOME", "TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL", "TZ", "SYSTEMROOT"]

const inherited = (env: NodeJS.ProcessEnv): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of inheritedNames) {
    const value = env[name]
    if (value !== undefined) out[name] = value
  }
  return out
}

/** Whether each service's compiled entry point exists (`pnpm build` first). */
export const missingBuilds = (): ReadonlyArray<string> =>
  services.map((s) => s.entry).filter((entry) => !Fs.existsSync(Path.join(repoRoot, entry)))

export interface StartOptions {
  /** PostgreSQL for the services that can use it (false: PGlite everywhere). */
  readonly postgres: boolean
  readonly only?: ReadonlyArray<string> | undefined
}

/** Starts the infrastructure and every service (in parallel); all stopped when the scope closes. */
export const start = (options: StartOptions) =>
  Effect.gen(function*() {
    const missing = missingBuilds()
    if (missing.length > 0) {
      return yield* Effect.dieMessage(`not built (run pnpm build): ${missing.join(", ")}`)
    }
    const context = yield* Layer.build(
      Layer.merge(DevIdp.layerTest, EmbeddedBroker.layer({ host: "127.0.0.1", port: 0 }).pipe(Layer.provide(EmbeddedBroker.allowAll)))
    )
    const idp = Context.get(context, DevIdp)
    const broker = Context.get(context, EmbeddedBroker.EmbeddedBroker)
    const postgresUrl = options.postgres
      ? Redacted.value((yield* Testing.makePostgresDatabase({ service: "e2e_browser" })).url)
      : undefined
    const scratch = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "rec-e2e-browser-services-"))),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    )
    const base = {
      ...inherited(process.env),
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      PLATFORM_OIDC_BASE_URL: idp.issuer,
      PLATFORM_OIDC_AUDIENCE: idp.audience,
      PLATFORM_MQTT_HOST: "127.0.0.1",
      PLATFORM_MQTT_PORT: String(broker.port),
      PLATFORM_POLICIES_POLICIES_DIR: Path.join(repoRoot, "policies")
    }
    const selected = services.filter((s) => options.only === undefined || options.only.includes(s.name))
    return yield* Effect.forEach(selected, (entry) => {
      const database = entry.noDatabase ? "none" : postgresUrl !== undefined && !entry.pgvector ? "postgresql" : "pglite"
      const env: Record<string, string> = {
        ...base,
        ...(database === "postgresql" ? { DATABASE_URL: postgresUrl! } : {}),
        ...(database === "pglite" ? { DATABASE_URL: "pglite://memory" } : {}),
        ...entry.env?.({ scratch })
      }
      return ServiceProcess.start({
        name: entry.name,
        entry: Path.join(repoRoot, entry.entry),
        env,
        // Anything a service writes relative to its directory (`./data/...`) lands in the scratch directory.
        cwd: scratch,
        startTimeout: Duration.minutes(3)
      }).pipe(
        Effect.flatMap((running) => {
          const docsBase = `${running.url}${entry.docsPrefix}`
          return running.docsUrl === `${docsBase}/docs`
            ? Effect.succeed<RunningService>({
              entry,
              url: running.url,
              docsBase,
              database,
              startMillis: running.startMillis,
              output: running.output
            })
            : Effect.fail(
              new ServiceProcess.ServiceStartError({
                service: entry.name,
                message: `logged its docs at ${running.docsUrl ?? "(none)"}, expected ${docsBase}/docs`
              })
            )
        })
      )
    }, { concurrency: "unbounded" })
  })
