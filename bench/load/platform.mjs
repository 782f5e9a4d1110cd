// The whole platform for the load and soak scripts, each part a separate process started from
// its built dist/main.js and configured by env only, as in production: the dev identity
// provider, the digital-twin simulator, the policy service (the other services decide with their
// embedded engine unless `remotePolicy`: then they ask it over RPC, POLICY_SERVICE_URL), registry, assistant (offline providers), nudging, flexibility, grid
// gateway and participant gateway, on one fresh PostgreSQL database (a schema per service) and
// Mosquitto on 127.0.0.1:1883 (aedes in this process when none answers).
//
// Every service runs with bench/load/diagnostics.mjs preloaded (heap and handles sampled to a
// file, see there). Rate limits are raised by env (`RATE_LIMIT_*`): the load comes from one
// client per service, far past what a single client may do in production.
/* global fetch, URLSearchParams */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { freePort, root, startProcess } from "../lib/processes.mjs"

/** The first answer below 500 of `url`, polled for up to `seconds` (a loaded machine starts slowly). */
const waitFor = async (url, child, seconds = 120) => {
  const until = Date.now() + seconds * 1000
  while (Date.now() < until) {
    if (child !== undefined && child.exitCode !== null) throw new Error(`the process exited (${child.exitCode})`)
    try {
      const response = await fetch(url)
      if (response.status < 500) return response
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`${url} did not come up in ${seconds} s`)
}

const requireFrom = (dir) => createRequire(path.join(root, dir, "package.json"))
const pg = requireFrom("services/flexibility")("pg")

const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const adminQuery = async (sql) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await client.query(sql)
  } finally {
    await client.end()
  }
}

const mosquittoUp = () =>
  new Promise((resolve) => {
    const socket = net.connect(1883, "127.0.0.1", () => {
      socket.destroy()
      resolve(true)
    })
    socket.on("error", () => resolve(false))
  })

/** `name`: [client id, scopes of its own token] of the dev identity provider. */
const serviceClients = {
  registry: "svc-rec-registry",
  assistant: "svc-assistant",
  nudging: "svc-nudging",
  flexibility: "svc-flexibility",
  "grid-gateway": "svc-grid",
  "participant-gateway": "svc-participant-gateway"
}

/** Raised limits: one benchmark client sends what many users would. */
const raisedLimits = {
  policy: { RATE_LIMIT_AUTHORIZE: "off", RATE_LIMIT_HEALTH: "off", RATE_LIMIT_RELOAD: "off" },
  registry: { RATE_LIMIT_IMPORT: "off" },
  assistant: { RATE_LIMIT_CHAT: "off", RATE_LIMIT_UPLOAD: "off", RATE_LIMIT_ADMIN: "off" },
  nudging: { RATE_LIMIT_INGEST: "off", RATE_LIMIT_PREFERENCES: "off", RATE_LIMIT_SUBSCRIPTIONS: "off", RATE_LIMIT_NOTIFICATIONS: "off" },
  flexibility: { RATE_LIMIT_COMMITMENTS: "off", RATE_LIMIT_SETTLE: "off" },
  "grid-gateway": { RATE_LIMIT_ALERT_RULES: "off", RATE_LIMIT_NOTIFICATION_SETTINGS: "off" },
  "participant-gateway": { RATE_LIMIT_WRITES: "off" }
}

/**
 * Starts everything; answers the services (`name` -> { url, pid, diagnostics }), the tokens the
 * scripts use, and `stop()` (drops the database; the processes stop when the script exits).
 */
/**
 * `remotePolicy`: the services ask the policy service over RPC (POLICY_SERVICE_URL) instead of
 * their embedded engine (the default: then each hot path measures its own service, and the policy
 * service is measured on its own /authorize).
 */
export const startPlatform = async ({ diagnosticsMs = 5000, verbose = true, remotePolicy = false } = {}) => {
  const runId = `${Date.now().toString(36)}_${crypto.randomBytes(3).toString("hex")}`
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-load-"))
  const database = `rec_load_${runId}`
  await adminQuery(`CREATE DATABASE ${database} TEMPLATE template0`)
  const databaseUrl = (() => {
    const url = new URL(adminUrl)
    url.pathname = `/${database}`
    return url.toString()
  })()
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch((e) => console.error(`could not drop ${database}: ${e.message}`))
  }

  let mqttPort = 1883
  let broker = "Mosquitto 127.0.0.1:1883"
  if (!(await mosquittoUp())) {
    const aedes = requireFrom("packages/mqtt")("aedes")
    const instance = await aedes.Aedes.createBroker()
    const server = net.createServer(instance.handle)
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
    server.unref()
    mqttPort = server.address().port
    broker = `aedes 127.0.0.1:${mqttPort} (in the script's process)`
  }
  const topicPrefix = `load-${runId}/`

  const idpPort = await freePort()
  const issuer = `http://127.0.0.1:${idpPort}`
  startProcess("packages/dev-idp/dist/main.js", { env: { PORT: String(idpPort), HOST: "127.0.0.1", DEV_IDP_ISSUER: issuer, LOG_LEVEL: "warn" } })
  await waitFor(`${issuer}/health`)

  const token = async (client, form) => {
    const response = await fetch(`${issuer}/protocol/openid-connect/token`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${client}:dev-only-secret-${client}`).toString("base64")}` },
      body: new URLSearchParams(form)
    })
    if (response.status !== 200) throw new Error(`token of ${client}: ${response.status} ${await response.text()}`)
    return (await response.json()).access_token
  }
  const user = (name) => token("rec-cli", { grant_type: "password", username: name, password: name })

  const twinPort = await freePort()
  const twinUrl = `http://127.0.0.1:${twinPort}`
  startProcess("packages/digital-twin/dist/simulator/main.js", {
    env: { PORT: String(twinPort), HOST: "127.0.0.1", PLATFORM_OIDC_BASE_URL: issuer, PLATFORM_OIDC_AUDIENCE: "rec-platform", LOG_LEVEL: "warn" }
  })
  await waitFor(`${twinUrl}/health`)

  const services = {}
  const ports = {}
  for (const name of ["policy", "registry", "assistant", "nudging", "flexibility", "grid-gateway", "participant-gateway"]) {
    ports[name] = await freePort()
  }
  const urlOf = (name) => `http://127.0.0.1:${ports[name]}`

  const start = async (name, env, readyPath = "/ready") => {
    const diagnostics = path.join(workDir, `${name}.jsonl`)
    const client = serviceClients[name]
    const child = startProcess(`services/${name}/dist/main.js`, {
      stdout: fs.openSync(path.join(workDir, `${name}.log`), "a"),
      nodeArgs: ["--expose-gc", "--import", pathToFileURL(path.join(root, "bench/load/diagnostics.mjs")).href],
      env: {
        PORT: String(ports[name]),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        PLATFORM_OIDC_BASE_URL: issuer,
        PLATFORM_OIDC_AUDIENCE: "rec-platform",
        PLATFORM_POLICIES_POLICIES_DIR: path.join(root, "policies"),
        POLICY_WATCH: "false",
        DATABASE_URL: databaseUrl,
        DATABASE_POOL_MAX: "5",
        PLATFORM_MQTT_HOST: "127.0.0.1",
        PLATFORM_MQTT_PORT: String(mqttPort),
        PLATFORM_MQTT_TOPIC_PREFIX: topicPrefix,
        ...(client === undefined
          ? {}
          : {
            PLATFORM_OIDC_CLIENT_ID: client,
            PLATFORM_OIDC_CLIENT_SECRET: `dev-only-secret-${client}`,
            ...(remotePolicy ? { POLICY_SERVICE_URL: urlOf("policy") } : {})
          }),
        LOAD_DIAGNOSTICS_FILE: diagnostics,
        LOAD_DIAGNOSTICS_MS: String(diagnosticsMs),
        ...raisedLimits[name],
        ...env
      }
    })
    services[name] = { url: urlOf(name), pid: child.pid, diagnostics, child }
    const started = Date.now()
    await waitFor(`${urlOf(name)}${readyPath}`, child).catch((error) => {
      throw new Error(`${name}: ${error.message}; its log: ${path.join(workDir, `${name}.log`)}`)
    })
    if (verbose) console.error(`${name} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }

  const startAll = async () => {
    await start("policy", { POLICY_ACCESS_LOG: "false", POLICY_AUDIT_ENABLED: "false" })
    await start("registry", {
      BASE_URL: urlOf("registry"),
      REGISTRY_SEED_BUNDLE: path.join(root, "examples/it-energy-community.bundle.yaml")
    }, "/health")
    // The machine's PostgreSQL has no pgvector: the assistant runs on its embedded database.
    await start("assistant", { ASSISTANT_STORAGE_DIR: path.join(workDir, "assistant-files"), DATABASE_URL: `pglite://${path.join(workDir, "assistant-db")}` })
    await start("nudging", { NUDGING_PUBLIC_URL: urlOf("nudging"), NUDGING_APP_BASE_URL: urlOf("participant-gateway") })
    await start("flexibility", {
      DIGITAL_TWIN_API_URL: twinUrl,
      NUDGING_API_URL: urlOf("nudging"),
      REC_REGISTRY_URL: urlOf("registry")
    })
    await start("grid-gateway", { DIGITAL_TWIN_API_URL: twinUrl, NUDGING_API_URL: urlOf("nudging"), DT_CLIENT_SCOPE: "dt.read" })
    await start("participant-gateway", {
      DIGITAL_TWIN_API_URL: twinUrl,
      NUDGING_API_URL: urlOf("nudging"),
      FLEXIBILITY_API_URL: urlOf("flexibility"),
      ASSISTANT_URL: urlOf("assistant")
    })

  }
  try {
    await startAll()
  } catch (error) {
    await stop()
    throw error
  }

  const tokens = {
    editor: await user("editor"),
    participant: await user("participant"),
    operator: await user("dso-operator"),
    grid: await token("svc-grid", { grant_type: "client_credentials" })
  }
  const participantSub = JSON.parse(Buffer.from(tokens.participant.split(".")[1], "base64url").toString()).sub
  return { services, tokens, participantSub, twinUrl, issuer, broker, databaseUrl: databaseUrl.replace(/\/\/[^@]*@/, "//"), workDir, stop }
}

/** The diagnostics samples of a service so far. */
export const samples = (service) =>
  fs.existsSync(service.diagnostics)
    ? fs.readFileSync(service.diagnostics, "utf8").trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
    : []

const today = () => new Date().toISOString().slice(0, 10)

/**
 * The hot path of each service, as autocannon targets, next to the baseline (its /health). The
 * first call of each is checked: a target that does not answer 2xx would measure an error path.
 */
export const hotPaths = ({ services, tokens, participantSub }) => {
  const bearer = (t) => ({ authorization: `Bearer ${t}` })
  const json = (t) => ({ ...bearer(t), "content-type": "application/json" })
  return [
    {
      service: "policy",
      name: "POST /authorize",
      url: `${services.policy.url}/authorize`,
      method: "POST",
      headers: { ...json(tokens.editor), "x-source-service": "load" },
      body: JSON.stringify({
        resource: { type: "dataset", id: "meters-2024-q3", attributes: { access_level: "internal", owner: "it-energy-community" } },
        action: { name: "write", context: { reason: "monthly import" } },
        context: { client_ip: "10.0.0.7" }
      })
    },
    { service: "registry", name: "GET /user/communities/it-energy-community", url: `${services.registry.url}/user/communities/it-energy-community`, method: "GET", headers: bearer(tokens.participant) },
    { service: "assistant", name: "GET /api/conversations", url: `${services.assistant.url}/api/conversations`, method: "GET", headers: bearer(tokens.participant) },
    {
      service: "nudging",
      name: "GET /notifications",
      url: `${services.nudging.url}/notifications?user_id=${participantSub}&community_id=it-energy-community`,
      method: "GET",
      headers: bearer(tokens.participant)
    },
    { service: "flexibility", name: "GET /api/commitments", url: `${services.flexibility.url}/api/commitments`, method: "GET", headers: bearer(tokens.participant) },
    {
      service: "grid-gateway",
      name: "GET /api/grid/{network}/summary",
      url: `${services["grid-gateway"].url}/api/grid/dso-alto-garda/summary`,
      method: "GET",
      headers: bearer(tokens.operator)
    },
    { service: "participant-gateway", name: "GET /api/overview", url: `${services["participant-gateway"].url}/api/overview`, method: "GET", headers: bearer(tokens.participant) }
  ].map((target) => ({
    ...target,
    baseline: { url: `${services[target.service].url}${target.service === "assistant" ? "/api/health" : "/health"}`, method: "GET" },
    today: today()
  }))
}

/** Fails loudly when a target does not answer 2xx. */
export const checkTargets = async (targets) => {
  for (const target of targets) {
    for (const request of [target, target.baseline]) {
      const response = await fetch(request.url, request)
      const text = await response.text()
      if (response.status >= 300) throw new Error(`${target.service} ${request.method} ${request.url}: ${response.status} ${text.slice(0, 300)}`)
    }
  }
}
