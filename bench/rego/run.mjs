#!/usr/bin/env node
// Micro-benchmark of the @rec/rego engine. Needs a build (`tsc -b packages/rego`).
//
//   node bench/rego/run.mjs [--samples 30000] [--json bench/rego/results.json]
//
// Measures, in one process and one run:
// - per-decision latency (p50, p99, mean) of prepared rules, each timed on its own:
//   a hand-written JS function and a trivial policy (the baselines), OPA's RBAC example from its
//   policy-performance guide (`rbac.rego`, request in the constant `inp`, like `opa bench`), the
//   same policy reading `input` with changing requests, and allow-lists of 10 to 10,000 rules
//   indexed by `input.path == ... ; input.method == ...` (hit in the middle, and miss);
// - the platform's policies/ as the policy service asks them (allow, reason, filters), mixed requests;
// - parse + compile time per module (RBAC, a 1,000-rule module, each module of policies/) and the
//   load of the whole policies/ tree;
// - regular expressions: a policy matching input with regex.match, and the RE2 engine (src/re2)
//   against V8's RegExp (the engine regex.* used before) on typical patterns and on a pattern
//   that makes backtracking explode;
// - memory of a 10 MB data.json held by the engine (in a child process with --expose-gc).
// Prints a table with ratios against the baselines and writes the numbers as JSON.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const { Rego } = await import(path.join(root, "packages/rego/dist/index.js"))
const { loadDirectory } = await import(path.join(root, "packages/rego/dist/loader.js"))
const { Regexp } = await import(path.join(root, "packages/rego/dist/re2/regexp.js"))

const { values } = parseArgs({
  options: {
    samples: { type: "string", default: "30000" },
    json: { type: "string", default: path.join(here, "results.json") },
    "memory-child": { type: "boolean", default: false }
  }
})

// ---------------------------------------------------------------------------------------------
// Memory child: holds a 10 MB data.json in the engine and reports heap growth.

if (values["memory-child"]) {
  const gc = globalThis.gc
  const users = {}
  let i = 0
  let text = ""
  // About 10 MB of JSON: users with roles and attributes, as a policy's data document would hold.
  while (text.length < 10 * 1024 * 1024) {
    for (let j = 0; j < 1000; j++, i++) {
      users[`user-${i}`] = { roles: ["viewer", i % 7 === 0 ? "admin" : "editor"], org: `org-${i % 97}`, level: i % 5, active: i % 3 !== 0 }
    }
    text = JSON.stringify({ users })
  }
  const bytes = Buffer.byteLength(text)
  gc()
  const before = process.memoryUsage().heapUsed
  const data = JSON.parse(text)
  text = ""
  const rego = Rego.compile({ modules: { "m.rego": "package m\nallow if data.users[input.user].level > 2" }, data })
  const allow = rego.prepareRule("data.m.allow")
  const ok = allow.evaluate({ user: "user-4" })
  gc()
  const after = process.memoryUsage().heapUsed
  process.stdout.write(JSON.stringify({ bytes, heapBytes: after - before, ok }))
  process.exit(0)
}

const defaultSamples = Number(values.samples)

/** Times fn once per sample (after a warm-up) and returns percentiles in microseconds. */
const measure = (fn, samples = defaultSamples) => {
  const warm = Math.min(20000, samples)
  for (let i = 0; i < warm; i++) fn(i)
  const ts = new Float64Array(samples)
  for (let i = 0; i < samples; i++) {
    const t0 = process.hrtime.bigint()
    fn(i)
    ts[i] = Number(process.hrtime.bigint() - t0)
  }
  let sum = 0
  for (const t of ts) sum += t
  ts.sort()
  const at = (q) => ts[Math.min(samples - 1, Math.floor(samples * q))] / 1000
  return { p50: at(0.5), p99: at(0.99), mean: sum / samples / 1000 }
}

const rbacSource = fs.readFileSync(path.join(here, "rbac.rego"), "utf8")
const rbacInputSource = rbacSource.replace(/^inp := \{[\s\S]*?^\}\n/m, "inp := input\n")

const rbacData = {
  bindings: [
    { user: "alice", roles: ["dev", "test"] },
    { user: "bob", roles: ["test"] }
  ],
  roles: [
    {
      name: "dev",
      permissions: [
        { resource: "foo123", action: "write" },
        { resource: "foo123", action: "read" }
      ]
    },
    { name: "test", permissions: [{ resource: "foo123", action: "read" }] }
  ]
}

/** The RBAC decision written by hand in JS, over the same data: the floor for any engine. */
const rbacJS = (inp) => {
  for (const b of rbacData.bindings) {
    if (b.user !== inp.subject) continue
    for (const roleName of b.roles) {
      for (const role of rbacData.roles) {
        if (role.name !== roleName) continue
        for (const p of role.permissions) if (p.resource === inp.resource && p.action === inp.action) return true
      }
    }
  }
  return false
}

const requests = [
  { subject: "bob", resource: "foo123", action: "write" },
  { subject: "alice", resource: "foo123", action: "write" },
  { subject: "bob", resource: "foo123", action: "read" },
  { subject: "carol", resource: "foo123", action: "read" }
]

const indexedModule = (n) => {
  let s = "package acl\n\ndefault allow := false\n"
  for (let i = 0; i < n; i++) s += `\nallow if {\n\tinput.path == "/api/v1/resource/${i}"\n\tinput.method == "${i % 2 === 0 ? "GET" : "POST"}"\n}\n`
  return s
}

const compileTime = (modules, reps) => {
  Rego.compile({ modules })
  const ts = []
  for (let i = 0; i < reps; i++) {
    const t0 = process.hrtime.bigint()
    Rego.compile({ modules })
    ts.push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
  ts.sort((a, b) => a - b)
  return ts[Math.floor(ts.length / 2)]
}

const results = { latency: {}, compile: {}, memory: {} }
const row = (name, r) => {
  results.latency[name] = r
}

// Baselines.
row("js_function_rbac", measure((i) => rbacJS(requests[i & 3])))
const trivial = Rego.compile({ modules: { "t.rego": "package t\n\nallow if input.user == \"admin\"\n" } }).prepareRule("data.t.allow")
row("trivial_policy", measure((i) => trivial.evaluate(i & 1 ? { user: "admin" } : { user: "bob" })))

// OPA's RBAC example, as `opa bench` runs it.
const rbac = Rego.compile({ modules: { "rbac.rego": rbacSource } }).prepareRule("data.rbac.allow")
if (rbac.evaluate() !== false) throw new Error("rbac: unexpected decision")
row("rbac_opa_example", measure(() => rbac.evaluate()))

// The same policy reading the request from input.
const rbacInput = Rego.compile({ modules: { "rbac.rego": rbacInputSource } }).prepareRule("data.rbac.allow")
for (const r of requests) if (rbacInput.evaluate(r) !== rbacJS(r)) throw new Error("rbac input: decision differs from the JS function")
row("rbac_input", measure((i) => rbacInput.evaluate(requests[i & 3])))

// Indexed allow-lists.
for (const n of [10, 100, 1000, 10000]) {
  const p = Rego.compile({ modules: { "acl.rego": indexedModule(n) } }).prepareRule("data.acl.allow")
  const mid = Math.floor(n / 2)
  const hit = { path: `/api/v1/resource/${mid}`, method: mid % 2 === 0 ? "GET" : "POST" }
  const miss = { path: "/api/v1/other", method: "GET" }
  if (p.evaluate(hit) !== true || p.evaluate(miss) !== false) throw new Error("indexed: wrong decision")
  row(`indexed_${n}_hit`, measure(() => p.evaluate(hit)))
  row(`indexed_${n}_miss`, measure(() => p.evaluate(miss)))
}

// 1,000 rules matching input.path with glob patterns (indexed by pattern segments).
{
  let src = "package acl\n\ndefault allow := false\n"
  for (let i = 0; i < 1000; i++) src += `\nallow if {\n\tglob.match("/api/v1/r${i}/*/items", ["/"], input.path)\n\tinput.method == "GET"\n}\n`
  const p = Rego.compile({ modules: { "acl.rego": src } }).prepareRule("data.acl.allow")
  const hit = { path: "/api/v1/r500/x1/items", method: "GET" }
  if (p.evaluate(hit) !== true || p.evaluate({ path: "/api/v1/r500/x1/other", method: "GET" }) !== false) throw new Error("glob: wrong decision")
  row("glob_indexed_1000_hit", measure(() => p.evaluate(hit)))
}

// The platform's own policies (policies/), as the policy service asks them: allow and reason
// (and filters for row filters) per request, over a mix of subjects, resources and actions.
const policiesDir = path.join(root, "policies")
if (fs.existsSync(policiesDir)) {
  const loaded = loadDirectory(policiesDir, { skipTests: true })
  const rego = Rego.compile(loaded)
  const user = (groups, scopes, orgs = ["org-1"]) => ({ id: "u-1", type: "user", groups, scopes, organizations: orgs, claims: {} })
  const service = (scopes) => ({ id: "svc-1", type: "service", groups: [], scopes, organizations: [], claims: {} })
  const req = (subject, type, id, action, attributes = {}, context = {}) => ({ subject, resource: { type, id, attributes }, action: { name: action, context } })
  const cases = [
    ["rec.dataset.access", req(null, "dataset", "ds-1", "read", { access_level: "open" })],
    ["rec.dataset.access", req(user(["editors"], ["dataset.query"]), "dataset", "ds-1", "write", { access_level: "internal" })],
    ["rec.dataset.access", req(user(["viewers"], []), "dataset", "ds-1", "read", { access_level: "restricted" })],
    ["rec.dataset.row_filter", req(user(["viewers"], ["dataset.query"], ["org-1", "org-2"]), "dataset", "ds-1", "filters", { access_level: "internal" })],
    ["rec.dataset.row_filter", req(service(["dataset.admin"]), "dataset", "ds-1", "filters", { access_level: "restricted" })],
    ["rec.dt.access", req(user(["viewers"], ["dt.read"]), "dt", "dt-1", "read")],
    ["rec.dt.access", req(user(["editors"], ["dt.simulate"]), "dt", "dt-1", "emit_event", {}, { event_type: "simulation", simulation_state: "running" })],
    ["rec.pipeline.state", req(user(["managers"], ["pipeline.execute"]), "pipeline", "p-1", "transition", {}, { from_state: "pending", to_state: "started" })],
    ["rec.pipeline.state", req(null, "pipeline", "p-1", "read")],
    ["rec.userdata.access", req(user(["viewers"], ["userdata.read"]), "userdata", "dash-1", "read", { resource_type: "dashboard", owner_id: "u-1" })],
    ["rec.userdata.access", req(user(["viewers"], ["userdata.write"]), "userdata", "dash-1", "write", { resource_type: "dashboard", owner_id: "alice" })],
    ["rec.mqtt.acl", req(user(["viewers"], []), "topic", "rec/telemetry/meter/m-1/readings", "subscribe", { clientid: "c-1" })],
    ["rec.mqtt.acl", req(user(["viewers"], []), "topic", "rec/telemetry/#", "subscribe", { clientid: "c-1" })],
    ["rec.mqtt.acl", req(user(["admins"], []), "topic", "rec/commands/meter/m-1", "publish", { clientid: "c-1" })]
  ]
  const prepared = cases.map(([pkg, input]) => {
    const rules = ["allow", "reason", ...(pkg.endsWith("row_filter") ? ["filters"] : [])].map((r) => rego.prepareRule(`data.${pkg}.${r}`))
    for (const r of rules) if (r.evaluate(input) === undefined) throw new Error(`policies: data.${pkg}.${r.path.at(-1)} is undefined`)
    return { rules, input }
  })
  row("policies_decision", measure((i) => {
    const p = prepared[i % prepared.length]
    for (const r of p.rules) r.evaluate(p.input)
  }))
  // The same decisions with the rules of a request evaluated together (Rego.prepareRules).
  const together = cases.map(([pkg, input]) => ({ rules: rego.prepareRules(["allow", "reason", ...(pkg.endsWith("row_filter") ? ["filters"] : [])].map((r) => `data.${pkg}.${r}`)), input }))
  row("policies_decision_shared", measure((i) => {
    const p = together[i % together.length]
    p.rules.evaluate(p.input)
  }))
}

// A group-by over 1,000 data items (a comprehension per item comparing against the outer item):
// linear thanks to comprehension indexing, quadratic without.
{
  const items = Array.from({ length: 1000 }, (_, i) => ({ id: i, kind: `k${i % 50}` }))
  const groupBy = Rego.compile({
    modules: { "g.rego": "package g\n\ncounts[k] := n if {\n\tsome x in data.items\n\tk := x.kind\n\tn := count([y | some y in data.items; y.kind == k])\n}\n" },
    data: { items }
  }).prepareRule("data.g.counts")
  if (groupBy.evaluate({}).k7 !== 20) throw new Error("group-by: wrong result")
  row("groupby_1000_items", measure(() => groupBy.evaluate({}), 300))
}

// Regular expressions.
{
  const p = Rego.compile({ modules: { "r.rego": 'package r\n\ndefault allow := false\n\nallow if regex.match("^arn:aws:iam::[0-9]{12}:role/[a-z-]+$", input.principal)\n' } }).prepareRule("data.r.allow")
  const hit = { principal: "arn:aws:iam::123456789012:role/deployer" }
  if (p.evaluate(hit) !== true || p.evaluate({ principal: "arn:aws:iam::1:role/x" }) !== false) throw new Error("regex policy: wrong decision")
  row("regex_match_policy", measure(() => p.evaluate(hit)))
  const patterns = [
    ["^[a-z]+\\[[0-9]+\\]$", "foo[1]"],
    ["^arn:aws:iam::[0-9]{12}:role/.*$", "arn:aws:iam::123456789012:role/admin-team/deployer"],
    ["(?i)^/api/v[0-9]+/users/[^/]+$", "/API/v2/users/alice"],
    ["[a-z0-9._%+-]+@example\\.com", "contact: someone.else+tag@example.com, thanks"],
    ["\\d+", "x".repeat(200) + "42"]
  ]
  results.regex = patterns.map(([pattern, text]) => {
    const re = Regexp.compile(pattern)
    const js = new RegExp(pattern.replace("(?i)", ""), pattern.startsWith("(?i)") ? "iu" : "u")
    if (re.matchString(text) !== js.test(text)) throw new Error(`regex: engines disagree on ${pattern}`)
    return { pattern, text_length: text.length, re2: measure(() => re.matchString(text), 10000), regexp: measure(() => js.test(text), 10000) }
  })
  // (a+)+$ on a run of a's and a "!": RE2 stays linear; RegExp doubles per "a" (timed once, on 20).
  const bad = Regexp.compile("(a+)+$")
  const text = "a".repeat(30) + "!"
  const t0 = process.hrtime.bigint()
  ;/(a+)+$/.test("a".repeat(20) + "!")
  results.regex_catastrophic = { pattern: "(a+)+$", re2_30: measure(() => bad.matchString(text), 2000), regexp_20_ms: Number(process.hrtime.bigint() - t0) / 1e6 }
}

// Parse + compile per module.
results.compile.rbac_ms = compileTime({ "rbac.rego": rbacSource }, 200)
results.compile.indexed_1000_rules_ms = compileTime({ "acl.rego": indexedModule(1000) }, 20)
if (fs.existsSync(policiesDir)) {
  const loaded = loadDirectory(policiesDir, { skipTests: true })
  // Each module together with the shared library it imports (policies/common).
  const common = loaded.modules.filter((m) => m.file.startsWith("common/"))
  results.compile.policies_common_ms = compileTime(common, 100)
  results.compile.policies_modules = Object.fromEntries(
    loaded.modules.filter((m) => !m.file.startsWith("common/")).map((m) => [m.file, compileTime([...common, m], 100)])
  )
  // Loading the whole tree: reading the files, parsing and compiling every module with its data.
  const ts = []
  for (let i = 0; i < 20; i++) {
    const t0 = process.hrtime.bigint()
    Rego.compile(loadDirectory(policiesDir, { skipTests: true }))
    ts.push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
  ts.sort((a, b) => a - b)
  results.compile.policies_tree_ms = ts[10]
  results.compile.policies_tree_modules = loaded.modules.length
}

// Memory of a 10 MB data document.
const child = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--memory-child"], { encoding: "utf8" })
if (child.status === 0) {
  const m = JSON.parse(child.stdout)
  results.memory = { data_json_bytes: m.bytes, heap_bytes: m.heapBytes, ratio: m.heapBytes / m.bytes }
} else results.memory = { error: child.stderr.trim().split("\n").at(-1) }

// Report.
const base = results.latency.trivial_policy.p50
const js = results.latency.js_function_rbac.p50
const fmt = (x) => x.toFixed(2).padStart(8)
console.log(`node ${process.version}, ${os.cpus()[0]?.model ?? "cpu"} (${os.cpus().length} cores), ${defaultSamples} samples per row (300 for the group-by)\n`)
console.log(`${"decision".padEnd(24)} ${"p50 µs".padStart(8)} ${"p99 µs".padStart(8)} ${"mean µs".padStart(8)}  ${"×trivial".padStart(8)} ${"×JS".padStart(8)}`)
for (const [name, r] of Object.entries(results.latency)) {
  console.log(`${name.padEnd(24)} ${fmt(r.p50)} ${fmt(r.p99)} ${fmt(r.mean)}  ${fmt(r.p50 / base)} ${fmt(r.p50 / js)}`)
}
console.log("\nparse + compile")
console.log(`  rbac.rego                 ${results.compile.rbac_ms.toFixed(2)} ms`)
console.log(`  1,000-rule module         ${results.compile.indexed_1000_rules_ms.toFixed(2)} ms`)
if (results.compile.policies_modules) {
  console.log(`  policies/common/ (alone)            ${results.compile.policies_common_ms.toFixed(2)} ms`)
  for (const [file, ms] of Object.entries(results.compile.policies_modules)) console.log(`  policies/${file.padEnd(26)} ${ms.toFixed(2)} ms (with common/)`)
  console.log(`  policies/ tree (${results.compile.policies_tree_modules} modules, read + parse + compile)  ${results.compile.policies_tree_ms.toFixed(2)} ms`)
}
if (results.regex) {
  console.log("\nregular expressions, matchString (µs p50): RE2 engine vs V8 RegExp")
  for (const r of results.regex) console.log(`  ${r.pattern.padEnd(36)} ${String(r.text_length).padStart(4)} chars  ${fmt(r.re2.p50)} ${fmt(r.regexp.p50)}`)
  const c = results.regex_catastrophic
  console.log(`  ${c.pattern} on 30 a's + "!": RE2 ${c.re2_30.p50.toFixed(2)} µs; RegExp on 20 a's + "!": ${c.regexp_20_ms.toFixed(0)} ms (doubling per a)`)
}
if (results.memory.ratio !== undefined) {
  console.log(`\nmemory: ${(results.memory.data_json_bytes / 1e6).toFixed(1)} MB data.json -> ${(results.memory.heap_bytes / 1e6).toFixed(1)} MB heap (${results.memory.ratio.toFixed(2)}×)`)
} else console.log(`\nmemory: ${results.memory.error}`)

const out = {
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, memory_gb: Math.round(os.totalmem() / 2 ** 30), platform: `${os.platform()} ${os.release()}` },
  node: process.version,
  samples: defaultSamples,
  ...results
}
fs.writeFileSync(values.json, JSON.stringify(out, null, 2) + "\n")
