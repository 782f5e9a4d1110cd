/**
 * Every service of the platform in this process, configured as the launcher configures them:
 * the dev identity provider (real RS256 tokens and JWKS), tokens verified from `PLATFORM_OIDC_*`
 * (issuer, audience `rec-platform`, RS256 only), the repository's policies (embedded engine), a
 * fresh PGlite database per service (or PostgreSQL for the nudging service when asked), real HTTP
 * between them: the participant gateway calls the digital-twin simulator, the nudging and
 * flexibility services and the assistant; the flexibility service and the grid gateway call the
 * simulator with their client credentials. Fakes only where a service reaches outside the
 * platform or would wait for time to pass: the flexibility service's nudges and community list
 * (recorded / fixed) and the grid gateway's alert nudges (recorded); the assistant's embedder and
 * answerer are its own local ones (no LLM). The MQTT broker is the embedded aedes broker.
 *
 * Every log line of every service is kept, as the kit's JSON logger writes it (`logs`), so a test
 * can search them for tokens and secrets.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import { ClientCredentials, TokenVerifier } from "@rec/auth"
import { Testing } from "@rec/db"
import { DevIdp, type DevIdpService } from "@rec/dev-idp"
import { DigitalTwinClient, makeClient, SimulatorServer } from "@rec/digital-twin"
import { EmbeddedBroker } from "@rec/mqtt"
import { Engines } from "@rec/policy"
import { Http as AssistantHttp, migrations as assistantMigrations } from "@rec/assistant-service"
import { Communities } from "@rec/flexibility-service/Communities"
import { Http as FlexibilityHttp } from "@rec/flexibility-service"
import { migrations as flexibilityMigrations } from "@rec/flexibility-service/migrations/index"
import { Nudges } from "@rec/flexibility-service/Nudges"
import { AlertNudges, Http as GridHttp } from "@rec/grid-gateway-service"
import { migrations as gridMigrations } from "@rec/grid-gateway-service/migrations/index"
import { Http as NudgingHttp, migrations as nudgingMigrations } from "@rec/nudging-service"
import { Http as ParticipantHttp, migrations as participantMigrations } from "@rec/participant-gateway-service"
import { Logging } from "@rec/platform"
import { Audit, Http as PolicyHttp } from "@rec/policy-service"
import { decodeRegistry, Owners } from "@rec/owners"
import { Http as RegistryHttp, migrations as registryMigrations, Updates } from "@rec/registry-service"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
export const repoPolicies = path.join(repoRoot, "policies")

export type ServiceName =
  | "policy"
  | "registry"
  | "assistant"
  | "nudging"
  | "flexibility"
  | "grid-gateway"
  | "participant-gateway"
  | "digital-twin"

export const serviceNames: ReadonlyArray<ServiceName> = [
  "policy",
  "registry",
  "assistant",
  "nudging",
  "flexibility",
  "grid-gateway",
  "participant-gateway",
  "digital-twin"
]

/** Secrets given to the services, which no log line may contain. */
export const secrets = {
  smtpPassword: "smtp-Pa55word-hardening-7c1e",
  clickSecret: "click-tracking-secret-hardening-52af",
  openAiKey: "sk-hardening-openai-key-0d9f3b",
  databasePassword: "db-Pa55word-hardening-91b2"
} as const

export interface StackService {
  readonly idp: DevIdpService
  readonly urls: Readonly<Record<ServiceName, string>>
  /** Every log line so far (JSON, as the kit's logger writes them). */
  readonly logs: ReadonlyArray<string>
  /** Whether the nudging service runs on PostgreSQL (with a password in its `DATABASE_URL`). */
  readonly nudgingOnPostgres: boolean
}

export class Stack extends Context.Tag("hardening/Stack")<Stack, StackService>() {}

/** Nudges the flexibility service sent (it would send them to the nudging service). */
export const sentNudges: Array<unknown> = []
/** Alerts the grid gateway sent (it would send them to the nudging service). */
export const sentAlerts: Array<unknown> = []

/** The dev identity provider's participants of the simulator's community. */
export const users = {
  giulia: { name: "participant", sub: "52409e36-6d23-45ed-bb1e-d6c564a2f454" },
  luca: { name: "participant-consumer", sub: "cc28f729-6d12-46a8-bdfe-c8b6952a99e0" }
} as const

const community = "it-energy-community"

const ownersText = `owners:
  - id: alto-garda-rec
    type: schema:Organization
    name: Comunità Energetica Rinnovabile Alto Garda
    url: https://cer-altogarda.example.org
`

const addressOf = (context: Context.Context<HttpServer.HttpServer>): string => {
  const address = Context.get(context, HttpServer.HttpServer).address
  return address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : "http://127.0.0.1:0"
}

/** Builds a served layer in the current scope and answers its base URL. */
const serve = <E, R>(layer: Layer.Layer<HttpServer.HttpServer, E, R>, env: Record<string, string>) =>
  Effect.map(
    Layer.build(layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))),
    addressOf
  )

const engine = Engines.embeddedWith({ directory: repoPolicies, watch: false })

const twinClient = (idp: DevIdpService, url: string, clientId: string) =>
  Layer.effect(
    DigitalTwinClient,
    Effect.gen(function*() {
      const tokens = yield* ClientCredentials.make({
        issuer: Option.some(idp.issuer),
        tokenEndpoint: Option.none(),
        clientId,
        clientSecret: Redacted.make(`dev-only-secret-${clientId}`),
        scope: Option.some("dt.read")
      })
      return yield* makeClient({ baseUrl: url, tokens })
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

const recordedNudges = Layer.succeed(
  Nudges,
  Nudges.of({
    send: (event) => Effect.sync(() => (sentNudges.push(event), "delivered" as const)),
    schedule: (event) => Effect.sync(() => void sentNudges.push(event)),
    unschedule: () => Effect.void
  })
)

const fixedCommunities = Layer.succeed(
  Communities,
  Communities.of({
    list: Effect.succeed([{ id: community }]),
    members: (id) => Effect.succeed(id === community ? [users.giulia.sub, users.luca.sub].map((userId) => ({ userId, communityId: id })) : [])
  })
)

const recordedAlerts = Layer.succeed(AlertNudges.AlertNudges, {
  send: (nudge) => Effect.sync(() => (sentAlerts.push(nudge), { outcome: "dispatched" as const }))
})

/** A local git repository of training materials (one Markdown file on `main`). */
const trainingMaterials = (dir: string): string => {
  const repo = path.join(dir, "training-materials")
  fs.mkdirSync(repo)
  fs.writeFileSync(path.join(repo, "saving-energy.md"), "# Saving energy\n\nRun the washing machine when the sun shines.\n")
  const git = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.name=hardening", "-c", "user.email=hardening@rec.example", ...args], { cwd: repo, stdio: "ignore" })
  git("init", "-q", "-b", "main")
  git("add", ".")
  git("commit", "-q", "-m", "training materials")
  return repo
}

export interface StackOptions {
  /** Run the nudging service on the machine's PostgreSQL with a password in its URL (trust auth accepts any). */
  readonly postgres?: boolean | undefined
}

const make = (options: StackOptions, logs: Array<string>) =>
  Effect.gen(function*() {
    const idp = yield* DevIdp
    const oidc = {
      PLATFORM_OIDC_BASE_URL: idp.issuer,
      PLATFORM_OIDC_AUDIENCE: idp.audience,
      PLATFORM_OIDC_ALGORITHMS: "RS256",
      PLATFORM_OIDC_CLOCK_TOLERANCE: "5 seconds"
    }
    const verifier = TokenVerifier.layer.pipe(Layer.orDie)
    const withOidc = Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(oidc)))))
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), "rec-hardening-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(storage, { recursive: true, force: true })))
    const trainingRepo = trainingMaterials(storage)

    const twin = yield* serve(SimulatorServer.layerTest().pipe(Layer.provide(verifier.pipe(withOidc))), oidc)
    const broker = yield* EmbeddedBroker.EmbeddedBroker.pipe(
      Effect.provide(EmbeddedBroker.layer({ port: 0 }).pipe(Layer.provide(EmbeddedBroker.allowAll)))
    )
    // The policy service's audit records (one per decision) are log lines of their own.
    const audit = Layer.succeed(Audit.AuditSink, { write: (record: Audit.AuditRecord) => void logs.push(Audit.format(record)) })
    const policy = yield* serve(PolicyHttp.makeTest({ engine }).pipe(Layer.provide(audit)), { ...oidc, RATE_LIMIT_RELOAD: "off" })
    const registry = yield* serve(
      RegistryHttp.makeTest({
        engine,
        database: Testing.layerPglite({ service: "registry", migrations: registryMigrations, transformNames: false }),
        owners: Owners.fromRegistry(Either.getOrThrow(decodeRegistry([{ file: "owners.yaml", text: ownersText }])), {
          baseUrl: "http://localhost:8004"
        }),
        updates: Updates.disabled
      }),
      oidc
    )
    const nudgingOnPostgres = options.postgres === true
    const nudgingDatabase = nudgingOnPostgres
      ? Testing.layerPostgres({
        service: "nudging",
        migrations: nudgingMigrations,
        url: `postgres://postgres:${secrets.databasePassword}@127.0.0.1:5432/postgres`
      })
      : Testing.layerPglite({ service: "nudging", migrations: nudgingMigrations })
    const nudging = yield* serve(NudgingHttp.makeTest({ engine, database: nudgingDatabase }), {
      ...oidc,
      // Nothing listens there: deliveries fail (and are logged), which is what the log test wants.
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: "9",
      SMTP_USE_TLS: "false",
      SMTP_USERNAME: "nudging",
      SMTP_PASSWORD: secrets.smtpPassword,
      CLICK_TRACKING_SECRET: secrets.clickSecret,
      EMAIL_FROM: "Comunità Energetica <nudging@rec.example>",
      NUDGING_APP_BASE_URL: "http://app.rec.example",
      NUDGING_PUBLIC_URL: "http://nudging.rec.example",
      NUDGING_DELIVERY_POLL_SECONDS: "0.5",
      SCHEDULER_POLL_SECONDS: "3600"
    })
    const assistant = yield* serve(
      AssistantHttp.makeTest({ engine, database: Testing.layerPglite({ service: "assistant", migrations: assistantMigrations }) }),
      {
        ...oidc,
        ASSISTANT_STORAGE_DIR: storage,
        ASSISTANT_MAX_UPLOAD_BYTES: String(2 * 1024 * 1024),
        // Offline providers (no LLM); the key is configured all the same and must not leak into logs.
        ASSISTANT_CHAT_PROVIDER: "extractive",
        ASSISTANT_EMBEDDING_PROVIDER: "local",
        TRAINING_MATERIALS_SYNC_ON_START: "false",
        TRAINING_MATERIALS_REPO: trainingRepo,
        TRAINING_MATERIALS_PATH: path.join(storage, "training-checkout"),
        OPENAI_API_KEY: secrets.openAiKey
      }
    )
    const flexibility = yield* serve(
      FlexibilityHttp.makeTest({
        engine,
        database: Testing.layerPglite({ service: "flexibility", migrations: flexibilityMigrations, transformNames: false }),
        digitalTwin: twinClient(idp, twin, "svc-flexibility"),
        nudges: recordedNudges,
        communities: fixedCommunities,
        mqtt: false
      }),
      oidc
    )
    const grid = yield* serve(
      GridHttp.makeTest({
        engine,
        database: Testing.layerPglite({ service: "grid-gateway", migrations: gridMigrations }),
        digitalTwin: twinClient(idp, twin, "svc-grid"),
        nudges: recordedAlerts
      }),
      { ...oidc, PLATFORM_MQTT_HOST: broker.host, PLATFORM_MQTT_PORT: String(broker.port), MQTT_STARTUP_TIMEOUT_SECONDS: "5" }
    )
    const participant = yield* serve(
      ParticipantHttp.makeTest({
        engine,
        database: Testing.layerPglite({ service: "participant-gateway", migrations: participantMigrations })
      }),
      {
        ...oidc,
        DIGITAL_TWIN_API_URL: twin,
        NUDGING_API_URL: nudging,
        FLEXIBILITY_API_URL: flexibility,
        ASSISTANT_URL: assistant
      }
    )
    return Stack.of({
      idp,
      logs,
      nudgingOnPostgres,
      urls: {
        policy,
        registry,
        assistant,
        nudging,
        flexibility,
        "grid-gateway": grid,
        "participant-gateway": participant,
        "digital-twin": twin
      }
    })
  })

/**
 * The stack, with every log line (all levels) captured as the kit's JSON logger formats it. The
 * lines are not printed.
 */
export const stackLayer = (options: StackOptions = {}): Layer.Layer<Stack | DevIdp, unknown> => {
  const logs: Array<string> = []
  const capture = Logger.replace(
    Logger.defaultLogger,
    Logger.map(Logging.jsonLogger({ service: "stack" }), (line) => void logs.push(line))
  )
  return Layer.scoped(Stack, make(options, logs)).pipe(
    Layer.provideMerge(DevIdp.layerTest),
    Layer.provide(Layer.merge(capture, Logger.minimumLogLevel(LogLevel.All)))
  )
}
