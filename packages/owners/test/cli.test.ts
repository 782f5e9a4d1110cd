import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { USAGE } from "../src/Commands.js"
import { runCommand as run } from "./CliHarness.js"

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const repoRoot = path.resolve(packageDir, "../..")
const devRegistry = path.join(repoRoot, "dev/owners.yaml")
const devOverlayExample = path.join(repoRoot, "dev/owners.local.yaml.example")

const writeTemp = (files: Record<string, string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "owners-cli-" })
    for (const [name, text] of Object.entries(files)) yield* fs.writeFileString(path.join(dir, name), text)
    return dir
  }).pipe(Effect.provide(NodeFileSystem.layer))

describe("owners validate", () => {
  it.effect("accepts the development registry and its overlay example, with a summary", () =>
    Effect.gen(function*() {
      const single = yield* run(["validate", devRegistry])
      expect(single).toEqual({
        code: 0,
        out: `ok: 5 owners from ${devRegistry}; 3 with organization.create`,
        err: ""
      })
      const layered = yield* run(["validate", devRegistry, devOverlayExample])
      expect(layered.code).toBe(0)
      expect(layered.out).toBe(
        `ok: 6 owners from ${devRegistry}, ${devOverlayExample}; overlays replaced 2 and added 1; 3 with organization.create`
      )
    }))

  it.scoped("exits 1 listing every problem of every file, then a count", () =>
    Effect.gen(function*() {
      const dir = yield* writeTemp({
        "owners.yaml": "owners:\n  - { id: Acme, type: schema:Charity, name: A }\n",
        "owners.local.yaml": "owners:\n  - { id: b, type: schema:NGO, name: B, organisation: {} }\n"
      })
      const base = path.join(dir, "owners.yaml")
      const overlay = path.join(dir, "owners.local.yaml")
      const result = yield* run(["validate", base, overlay])
      expect(result.code).toBe(1)
      expect(result.out).toBe("")
      expect(result.err.split("\n")).toEqual([
        `${base}:2:11 $.owners[0].id: expected lowercase kebab-case (a-z, 0-9 and '-', starting and ending with a letter or digit), got "Acme"`,
        `${base}:2:23 $.owners[0].type: expected one of schema:Corporation, schema:GovernmentOrganization, schema:ResearchOrganization, schema:EducationalOrganization, schema:NGO, schema:Organization, schema:Project, got "schema:Charity"`,
        `${overlay}:2:41 $.owners[0].organisation: unknown property "organisation" (did you mean "organization"?)`,
        "3 problems in 2 of 2 files"
      ])
    }))

  it.scoped("falls back to OWNERS_FILE and picks up its .local overlay", () =>
    Effect.gen(function*() {
      const dir = yield* writeTemp({
        "owners.yaml": "owners:\n  - { id: a, type: schema:NGO, name: A }\n",
        "owners.local.yaml": "owners:\n  - { id: b, type: schema:NGO, name: B }\n"
      })
      const result = yield* run(["validate"], { OWNERS_FILE: path.join(dir, "owners.yaml") })
      expect(result.code).toBe(0)
      expect(result.out).toContain("ok: 2 owners from")
      expect(result.out).toContain("overlays replaced 0 and added 1")
    }))

  it.effect("exits 2 without files or OWNERS_FILE, and on unknown options", () =>
    Effect.gen(function*() {
      const none = yield* run(["validate"])
      expect(none.code).toBe(2)
      expect(none.err).toBe("owners: no registry files given (and OWNERS_FILE is not set)\nRun \"owners help\" for usage.")
      const unknown = yield* run(["validate", "--strict", devRegistry])
      expect(unknown.code).toBe(2)
      expect(unknown.err).toMatch(/^owners: Unknown option '--strict'/)
    }))
})

describe("owners resolve", () => {
  it.effect("prints the JSON-LD node of the owner an alias names", () =>
    Effect.gen(function*() {
      const result = yield* run(["resolve", "dso", devRegistry])
      expect(result.code).toBe(0)
      expect(JSON.parse(result.out)).toEqual({
        "@id": "did:web:northgrid.example.org",
        "@type": [
          "http://xmlns.com/foaf/0.1/Agent",
          "http://xmlns.com/foaf/0.1/Organization",
          "https://schema.org/Corporation"
        ],
        "http://xmlns.com/foaf/0.1/name": "NorthGrid Distribution",
        "http://xmlns.com/foaf/0.1/homepage": { "@id": "https://northgrid.example.org" }
      })
    }))

  it.effect("mints IRIs under --platform-base-url, else PLATFORM_BASE_URL", () =>
    Effect.gen(function*() {
      const flag = yield* run(["resolve", "rec-platform-project", devRegistry, "--platform-base-url", "https://a.example/x"])
      expect(JSON.parse(flag.out)["@id"]).toBe("https://a.example/x/owners/rec-platform-project")
      const env = yield* run(["resolve", "rec-platform-project", devRegistry], { PLATFORM_BASE_URL: "https://b.example" })
      expect(JSON.parse(env.out)["@id"]).toBe("https://b.example/owners/rec-platform-project")
    }))

  it.effect("exits 1 for an unknown reference and 2 without one", () =>
    Effect.gen(function*() {
      const unknown = yield* run(["resolve", "nobody", devRegistry])
      expect(unknown).toEqual({ code: 1, out: "", err: "owners: no owner with id, alias, DID or URL \"nobody\"" })
      expect((yield* run(["resolve"])).code).toBe(2)
    }))
})

describe("owners (no command, help, unknown command)", () => {
  it.effect("prints usage", () =>
    Effect.gen(function*() {
      expect(yield* run(["help"])).toEqual({ code: 0, out: USAGE, err: "" })
      expect(yield* run(["sync-orgs", "--help"])).toEqual({ code: 0, out: USAGE, err: "" })
      expect(yield* run([])).toEqual({ code: 2, out: "", err: USAGE })
      const unknown = yield* run(["sync"])
      expect(unknown.code).toBe(2)
      expect(unknown.err).toContain("owners: unknown command \"sync\"")
    }))
})

const binary = path.join(packageDir, "bin/owners.js")
const built = fs.existsSync(path.join(packageDir, "dist/cli.js"))

describe("bin/owners.js", () => {
  // The binary runs the compiled dist/: CI builds before testing; a bare `vitest run` on a
  // fresh checkout has no dist/ and cannot exercise it.
  it.skipIf(!built)("exits with the command's status and writes problems to stderr", async () => {
    const exec = (args: ReadonlyArray<string>) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [binary, ...args], { cwd: repoRoot }, (error, stdout, stderr) =>
          resolve({ code: error?.code === undefined ? 0 : Number(error.code), stdout, stderr }))
      })
    const ok = await exec(["validate", "dev/owners.yaml"])
    expect(ok).toEqual({ code: 0, stdout: "ok: 5 owners from dev/owners.yaml; 3 with organization.create\n", stderr: "" })
    const missing = await exec(["validate", "does-not-exist.yaml"])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe("does-not-exist.yaml: file not found\n1 problem in 1 of 1 file\n")
    expect((await exec(["nope"])).code).toBe(2)
  })
})
