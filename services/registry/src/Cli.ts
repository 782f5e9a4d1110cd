/**
 * `registry validate|import|export`: the registry's bundle operations over its HTTP API, for
 * people and scripts.
 *
 * ```
 * registry validate FILE            every problem of the bundle (nothing is written)
 * registry import FILE              replace the bundle's community (refused whole if anything is wrong)
 * registry export COMMUNITY [-o F]  the community as a bundle v0.4 (stdout, or the file F)
 * ```
 *
 * Options: `--url URL` (or `REGISTRY_URL`, default `http://localhost:8004`), `--token TOKEN`
 * (or `REGISTRY_TOKEN`: an access token of an admin or of a service with `registry.admin`, e.g.
 * `REGISTRY_TOKEN=$(node packages/dev-idp/bin/dev-token.js admin)`), `--json` (print the
 * service's answer as JSON). Exit codes are `ExitCode`.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"

export const ExitCode = {
  ok: 0,
  /** The bundle has problems (validate), or was refused for them (import, 422). */
  invalid: 1,
  /** The command line is wrong or the file cannot be read. */
  usage: 2,
  /** The service refused the request: no or wrong token (401/403), unknown community (404), too large (413), a parsing limit (400), a conflict (409). */
  refused: 3,
  /** The service cannot be reached or failed (5xx). */
  unavailable: 4
} as const

export interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  readonly env: Readonly<Record<string, string | undefined>>
  readonly readFile: (file: string) => Buffer
  readonly writeFile: (file: string, text: string) => void
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  readFile: (file) => fs.readFileSync(file),
  writeFile: (file, text) => fs.writeFileSync(file, text)
}

export const usage = `usage: registry <command> [options]

  registry validate FILE             check a bundle (YAML, v0.4); nothing is written
  registry import FILE               replace the bundle's community with it
  registry export COMMUNITY [-o F]   the community as a bundle (stdout, or the file F)

options:
  --url URL      the registry (default $REGISTRY_URL, else http://localhost:8004)
  --token TOKEN  an admin's access token (default $REGISTRY_TOKEN)
  --json         print the service's answer as JSON
exit codes: 0 ok, 1 the bundle has problems, 2 usage, 3 refused by the service, 4 service unavailable
`

interface Parsed {
  readonly command: string
  readonly argument: string
  readonly url: string
  readonly token: string | undefined
  readonly json: boolean
  readonly output: string | undefined
}

const parse = (argv: ReadonlyArray<string>, env: Io["env"]): Parsed | string => {
  const positional: Array<string> = []
  let url = env["REGISTRY_URL"] ?? "http://localhost:8004"
  let token = env["REGISTRY_TOKEN"]
  let json = false
  let output: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = () => {
      const next = argv[++i]
      if (next === undefined) throw new Error(`${arg} needs a value`)
      return next
    }
    try {
      if (arg === "--url") url = value()
      else if (arg === "--token") token = value()
      else if (arg === "-o" || arg === "--output") output = value()
      else if (arg === "--json") json = true
      else if (arg === "-h" || arg === "--help") return "help"
      else if (arg.startsWith("-")) return `unknown option ${arg}`
      else positional.push(arg)
    } catch (error) {
      return (error as Error).message
    }
  }
  const [command, argument, ...rest] = positional
  if (command === undefined) return "a command is required"
  if (!["validate", "import", "export"].includes(command)) return `unknown command ${command}`
  if (argument === undefined) return command === "export" ? "export needs the community key" : `${command} needs the bundle file`
  if (rest.length > 0) return `unexpected argument ${rest[0]}`
  if (output !== undefined && command !== "export") return "-o is for export"
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) return `--url must be an http(s) URL, not ${url}`
  return { command, argument, url: url.replace(/\/+$/, ""), token, json, output }
}

interface Reply {
  readonly status: number
  readonly text: string
}

/** One request with a known length (a GET with a body must not be sent unframed). */
const request = (method: "GET" | "POST", url: string, token: string | undefined, body?: { readonly bytes: Buffer; readonly type: string }) =>
  new Promise<Reply>((resolve, reject) => {
    const target = new URL(url)
    const headers: Record<string, string | number> = { accept: "application/json, application/yaml" }
    if (token !== undefined) headers["authorization"] = `Bearer ${token}`
    if (body !== undefined) {
      headers["content-type"] = body.type
      headers["content-length"] = body.bytes.length
    }
    const req = (target.protocol === "https:" ? https : http).request(target, { method, headers, timeout: 120_000, agent: false }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("timeout", () => req.destroy(new Error("no answer within 120 s")))
    req.on("error", reject)
    if (body !== undefined) req.write(body.bytes)
    req.end()
  })

const multipart = (file: string, bytes: Buffer) => {
  const boundary = `----registry-cli-${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`
  const name = file.split(/[\\/]/).pop()!.replace(/["\r\n]/g, "_")
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/yaml\r\n\r\n`
  return {
    bytes: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    type: `multipart/form-data; boundary=${boundary}`
  }
}

interface Problem {
  readonly path: ReadonlyArray<string | number>
  readonly code: string
  readonly message: string
  readonly line?: number
  readonly column?: number
}

/** `members.m1.assets.pv["p 1"].rated_power` */
export const formatPath = (path: ReadonlyArray<string | number>): string =>
  path.length === 0
    ? "(bundle)"
    : path.map((segment, i) =>
      typeof segment === "number"
        ? `[${segment}]`
        : /^[A-Za-z0-9_-]+$/.test(segment)
        ? `${i === 0 ? "" : "."}${segment}`
        : `[${JSON.stringify(segment)}]`
    ).join("")

export const formatProblem = (file: string, problem: Problem): string => {
  const where = problem.line === undefined ? file : `${file}:${problem.line}${problem.column === undefined ? "" : `:${problem.column}`}`
  return `${where} ${formatPath(problem.path)}: ${problem.message} [${problem.code}]`
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const countsText = (counts: Record<string, number> | null | undefined) =>
  counts === null || counts === undefined
    ? "nothing"
    : `${plural(counts["members"] ?? 0, "member")}, ${plural(counts["assets"] ?? 0, "asset")} (${plural(counts["meters"] ?? 0, "meter")}), ${plural(counts["sites"] ?? 0, "site")}`

const json = (text: string): Record<string, unknown> | undefined => {
  try {
    const value = JSON.parse(text) as unknown
    return typeof value === "object" && value !== null ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

/** What went wrong with a request, for people; and its exit code. */
const failure = (io: Io, reply: Reply): number => {
  const detail = json(reply.text)?.["detail"]
  io.err(`registry answered ${reply.status}: ${typeof detail === "string" ? detail : reply.text.slice(0, 500)}\n`)
  if (reply.status === 401) io.err("hint: pass an admin's access token with --token or REGISTRY_TOKEN\n")
  return reply.status >= 500 ? ExitCode.unavailable : ExitCode.refused
}

const printProblems = (io: Io, file: string, problems: ReadonlyArray<Problem>, warnings: ReadonlyArray<Problem>) => {
  for (const problem of problems) io.err(`${formatProblem(file, problem)}\n`)
  for (const warning of warnings) io.err(`warning: ${formatProblem(file, warning)}\n`)
}

/** Runs one command line; resolves with the exit code. */
export const run = async (argv: ReadonlyArray<string>, io: Io = processIo): Promise<number> => {
  const parsed = parse(argv, io.env)
  if (parsed === "help") {
    io.out(usage)
    return ExitCode.ok
  }
  if (typeof parsed === "string") {
    io.err(`registry: ${parsed}\n\n${usage}`)
    return ExitCode.usage
  }
  let file: Buffer | undefined
  if (parsed.command !== "export") {
    try {
      file = io.readFile(parsed.argument)
    } catch (error) {
      io.err(`registry: cannot read ${parsed.argument}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`)
      return ExitCode.usage
    }
  }
  let reply: Reply
  try {
    reply = parsed.command === "export"
      ? await request("GET", `${parsed.url}/admin/export?community=${encodeURIComponent(parsed.argument)}`, parsed.token)
      : await request(parsed.command === "validate" ? "GET" : "POST", `${parsed.url}/admin/import`, parsed.token, multipart(parsed.argument, file!))
  } catch (error) {
    io.err(`registry: cannot reach ${parsed.url}: ${(error as Error).message}\n`)
    return ExitCode.unavailable
  }

  if (parsed.command === "export") {
    if (reply.status !== 200) return failure(io, reply)
    if (parsed.output === undefined) io.out(reply.text)
    else {
      try {
        io.writeFile(parsed.output, reply.text)
      } catch (error) {
        io.err(`registry: cannot write ${parsed.output}: ${(error as Error).message}\n`)
        return ExitCode.usage
      }
      io.err(`exported ${parsed.argument} to ${parsed.output}\n`)
    }
    return ExitCode.ok
  }

  const body = json(reply.text)
  if (parsed.command === "validate") {
    if (reply.status !== 200 || body === undefined) return failure(io, reply)
    if (parsed.json) io.out(`${JSON.stringify(body, null, 2)}\n`)
    const problems = (body["problems"] ?? []) as ReadonlyArray<Problem>
    const warnings = (body["warnings"] ?? []) as ReadonlyArray<Problem>
    printProblems(io, parsed.argument, problems, warnings)
    if (body["valid"] !== true) {
      io.err(`${parsed.argument}: ${plural(problems.length, "problem")}; the bundle would not be imported\n`)
      return ExitCode.invalid
    }
    const existing = body["existing"] as Record<string, number> | null
    if (!parsed.json) {
      io.out(`ok: ${body["community"]} with ${countsText(body["counts"] as Record<string, number>)}` +
        (existing === null ? " (a new community)" : `; an import would replace ${countsText(existing)}`) + "\n")
    }
    return ExitCode.ok
  }

  if (reply.status === 422 && body !== undefined) {
    if (parsed.json) io.out(`${JSON.stringify(body, null, 2)}\n`)
    printProblems(io, parsed.argument, (body["problems"] ?? []) as ReadonlyArray<Problem>, (body["warnings"] ?? []) as ReadonlyArray<Problem>)
    io.err(`${parsed.argument}: ${String(body["detail"])}\n`)
    return ExitCode.invalid
  }
  if (reply.status !== 201 || body === undefined) return failure(io, reply)
  if (parsed.json) io.out(`${JSON.stringify(body, null, 2)}\n`)
  printProblems(io, parsed.argument, [], (body["warnings"] ?? []) as ReadonlyArray<Problem>)
  if (!parsed.json) {
    const replaced = body["replaced"] as Record<string, number> | null
    io.out(`imported ${body["community"]}: ${countsText(body["imported"] as Record<string, number>)}` +
      (replaced === null ? " (new)" : `, replacing ${countsText(replaced)}`) +
      (body["notified"] === true ? "; update published" : "") + "\n")
  }
  return ExitCode.ok
}
