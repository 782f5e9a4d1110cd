// What run.mjs and alloc.mjs share: child processes (optionally pinned to a CPU), the dev identity
// provider and its access token, the request body, the policy service's start, autocannon, and the
// CPU time of a process from /proc/<pid>/stat.
/* global fetch, URLSearchParams */
import { execSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
// autocannon is a devDependency of the policy service package.
const autocannon = createRequire(path.join(root, "services/policy/package.json"))("autocannon")

export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

const ticksPerSecond = (() => {
  try {
    return Number(execSync("getconf CLK_TCK").toString().trim()) || 100
  } catch {
    return 100
  }
})()

/** User + system CPU time of a process, in microseconds (robust on a shared machine). */
export const cpuMicros = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1e6
}

const children = []

/**
 * Starts `node [nodeArgs] <file>` from the repository root; with `pin` (a CPU number), under
 * `taskset -c <pin>`. Stopped when this process exits.
 */
export const startProcess = (file, { env = {}, pin, nodeArgs = [], stdout = "ignore" } = {}) => {
  if (!fs.existsSync(path.join(root, file))) {
    console.error(`${file} is missing: build first (pnpm build)`)
    process.exit(2)
  }
  const nodeCommand = [...nodeArgs, path.join(root, file)]
  const [command, args] = pin === undefined
    ? [process.execPath, nodeCommand]
    : ["taskset", ["-c", pin, process.execPath, ...nodeCommand]]
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", stdout, "inherit"]
  })
  children.push(child)
  return child
}

export const stopAll = () => {
  for (const child of children) child.kill("SIGTERM")
}
process.on("exit", stopAll)
process.on("SIGINT", () => process.exit(130))

export const waitFor = async (url, init) => {
  for (let i = 0; i < 200; i++) {
    try {
      const response = await fetch(url, init)
      if (response.status < 500) return response
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${url} did not come up`)
}

/** One autocannon run (no pipelining). */
export const run = (options) =>
  new Promise((resolve, reject) => {
    autocannon({ pipelining: 1, ...options }, (error, result) => (error ? reject(error) : resolve(result)))
  })

/** The dev identity provider in its own process, and a real access token of the user `editor`. */
export const identityProvider = async ({ pin } = {}) => {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  startProcess("packages/dev-idp/dist/main.js", {
    pin,
    env: { PORT: String(port), HOST: "127.0.0.1", DEV_IDP_ISSUER: issuer, LOG_LEVEL: "warn" }
  })
  await waitFor(`${issuer}/health`)
  const response = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from("rec-cli:dev-only-secret-rec-cli").toString("base64")}` },
    body: new URLSearchParams({ grant_type: "password", username: "editor", password: "editor" })
  })
  const token = (await response.json()).access_token
  return { issuer, token }
}

/** A realistic question: an editor's client asks whether it may write an internal dataset. */
export const body = JSON.stringify({
  resource: { type: "dataset", id: "meters-2024-q3", attributes: { access_level: "internal", owner: "it-energy-community" } },
  action: { name: "write", context: { reason: "monthly import" } },
  context: { client_ip: "10.0.0.7" }
})

/**
 * Starts the policy service (`services/policy/dist/main.js`, logs to /dev/null) with `env`, waits
 * until it is ready and checks that it allows the benchmark's question; returns the process and
 * the autocannon target of `POST /authorize`.
 */
export const startPolicy = async ({ issuer, token, env = {}, pin, nodeArgs }) => {
  const port = await freePort()
  const policy = startProcess("services/policy/dist/main.js", {
    pin,
    nodeArgs,
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      PLATFORM_OIDC_BASE_URL: issuer,
      PLATFORM_POLICIES_POLICIES_DIR: path.join(root, "policies"),
      POLICY_WATCH: "false",
      ...env
    }
  })
  await waitFor(`http://127.0.0.1:${port}/ready`)
  const target = {
    url: `http://127.0.0.1:${port}/authorize`,
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "x-source-service": "bench" },
    body
  }
  const check = await fetch(target.url, target)
  const answer = await check.json()
  if (check.status !== 200 || answer.allowed !== true) {
    console.error("unexpected answer from /authorize:", check.status, answer)
    process.exit(1)
  }
  return { policy, target }
}
