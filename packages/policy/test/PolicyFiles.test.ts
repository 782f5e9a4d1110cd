import { describe, expect, it } from "@effect/vitest"
import { Subject } from "@rec/auth"
import { PolicyFiles, PolicyInput } from "@rec/policy"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const directory = (files: Record<string, string>) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-policy-files-"))
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
  return dir
}

describe("PolicyFiles.read", () => {
  it.effect("reads modules in sorted order, skips tests and hidden entries, places data by directory", () =>
    Effect.gen(function*() {
      const dir = directory({
        "b/policy.rego": "package b",
        "a/policy.rego": "package a",
        "a/policy_test.rego": "package a_test",
        ".git/x.rego": "package hidden",
        "..data/c.rego": "package configmap_copy",
        "data.json": JSON.stringify({ rec: { mqtt: { rules: [] } } }),
        "rec/limits/data.yaml": "max: 3\n",
        "notes.md": "ignored"
      })
      const sources = yield* PolicyFiles.read(dir)
      expect(sources.modules.map((m) => m.path)).toEqual(["a/policy.rego", "b/policy.rego"])
      expect(sources.data).toEqual({ rec: { mqtt: { rules: [] }, limits: { max: 3 } } })
    }))

  it.effect("follows symbolic links (ConfigMap volumes)", () =>
    Effect.gen(function*() {
      const target = directory({ "policy.rego": "package linked" })
      const dir = directory({})
      fs.symlinkSync(path.join(target, "policy.rego"), path.join(dir, "policy.rego"))
      const sources = yield* PolicyFiles.read(dir)
      expect(sources.modules).toEqual([{ path: "policy.rego", source: "package linked" }])
    }))

  it.effect("reports unreadable data, conflicting data and empty directories with the file", () =>
    Effect.gen(function*() {
      const broken = yield* Effect.flip(PolicyFiles.read(directory({ "p.rego": "package p", "x/data.json": "{" })))
      expect(broken.problems[0]?.file).toBe("x/data.json")
      const conflict = yield* Effect.flip(
        PolicyFiles.read(directory({ "p.rego": "package p", "data.json": `{"x": {"y": 1}}`, "x/data.json": `{"y": 2}` }))
      )
      expect(conflict.message).toContain("data.x.y")
      const root = yield* Effect.flip(PolicyFiles.read(directory({ "p.rego": "package p", "data.json": "[1]" })))
      expect(root.message).toContain("must hold an object")
      const empty = yield* Effect.flip(PolicyFiles.read(directory({ "README.md": "no policies" })))
      expect(empty.message).toContain("no policy")
      const missing = yield* Effect.flip(PolicyFiles.read(path.join(os.tmpdir(), "rec-policy-does-not-exist")))
      expect(missing.message).toContain("cannot read")
    }))
})

describe("PolicyInput", () => {
  it("builds the policy subject from an @rec/auth Subject as plain JSON", () => {
    const subject = Subject.fromClaims({
      sub: "u-1",
      preferred_username: "alice",
      groups: ["/viewers"],
      scope: "openid dataset.query",
      organization: { "dso-alto-garda": { id: "o-1", type: ["dso"] } },
      exp: 1
    })
    const policySubject = PolicyInput.subjectOf(subject)
    expect(policySubject).toEqual({
      id: "u-1",
      type: "user",
      groups: ["viewers"],
      scopes: ["dataset.query", "openid"],
      organizations: [{ alias: "dso-alto-garda", id: "o-1", types: ["dso"], attributes: {}, groups: [], roles: [] }],
      claims: subject.claims
    })
    // Plain data: no class instances reach the Rego engine.
    expect(Object.getPrototypeOf(policySubject.organizations[0])).toBe(Object.prototype)
    expect(PolicyInput.maybeSubjectOf(Option.none())).toBeNull()
  })

  it("make fills the environment; the caller's context cannot override request_id or timestamp", () => {
    const input = PolicyInput.make({
      subject: null,
      resource: { type: "dataset", id: "d" },
      action: { name: "read" },
      requestId: "r-1",
      environment: { request_id: "forged", timestamp: 0, region: "it" }
    })
    expect(input.resource.attributes).toEqual({})
    expect(input.action.context).toEqual({})
    expect(input.environment).toMatchObject({ request_id: "r-1", region: "it" })
    expect(input.environment?.timestamp).toBeGreaterThan(1_000_000_000)
  })
})
