// What run.mjs and alloc.mjs share beyond bench/lib/processes.mjs: the dev identity provider and
// its access token, the request body, and the policy service's start.
/* global fetch, URLSearchParams */
import * as path from "node:path"
import { freePort, root, startProcess, waitFor } from "../lib/processes.mjs"

export { cpuMicros, root, run, startProcess, stopAll } from "../lib/processes.mjs"

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
      // One client sends everything here: the limiter runs (its cost is measured) but never refuses.
      RATE_LIMIT_AUTHORIZE: "1000000/1s",
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
