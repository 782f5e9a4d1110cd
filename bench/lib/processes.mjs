// What the HTTP benchmarks share: the repository root, servers in child processes (optionally
// pinned to a CPU) stopped when the benchmark exits, waiting for them to answer, free ports,
// autocannon, and the CPU time of a process from /proc/<pid>/stat.
/* global fetch */
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
  // Fields after the command name (which may contain spaces) start at index 2 (state).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1e6
}

const children = []

/**
 * Starts `node [nodeArgs] <file> [args]` (`file` relative to the repository root) from the
 * repository root; with `pin` (a CPU number), under `taskset -c <pin>`. Stopped when this
 * process exits.
 */
export const startProcess = (file, { args = [], env = {}, pin, nodeArgs = [], stdout = "ignore" } = {}) => {
  if (!fs.existsSync(path.join(root, file))) {
    console.error(`${file} is missing: build first (pnpm build)`)
    process.exit(2)
  }
  const nodeCommand = [...nodeArgs, path.join(root, file), ...args]
  const [command, commandArgs] = pin === undefined
    ? [process.execPath, nodeCommand]
    : ["taskset", ["-c", pin, process.execPath, ...nodeCommand]]
  const child = spawn(command, commandArgs, {
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

/** The first answer below 500 of `url`, polled every 100 ms for up to 20 s. */
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
