/**
 * What keeps a 10,000-member import and export small in memory gives exactly what the plain
 * ways give: the YAML read in parts (`BundleYaml.loadInParts`) is the value of one parse, key
 * order included, or it declines and the one parse decides; the export written page by page
 * (`BundleExport.pagedYaml`) is the bytes of the whole-bundle writer.
 */
import { Bundles, BundleExport, Config, Generate, Plan } from "@rec/registry-service"
import { loadInParts, loadYaml, partBytes, partition } from "@rec/registry-service/BundleYaml"
import type { AssetRecord, CommunityRecord, MemberRecord, SiteRecord } from "@rec/registry-service/RegistryRepo"
import * as Effect from "effect/Effect"
import { CORE_SCHEMA, dump, load } from "js-yaml"
import { describe, expect, it } from "vitest"
import { exampleText } from "./helpers.js"

const limits = Config.defaultLimits
const whole = (text: string) => load(text, { schema: CORE_SCHEMA, maxDepth: limits.maxDepth, maxAliases: limits.maxAliases })
/** Equal values with their keys in the same order. */
const same = (a: unknown, b: unknown) => expect(JSON.stringify(a)).toBe(JSON.stringify(b))

/** A generated bundle whose member keys are renamed (integer-like keys enumerate first in JS objects). */
const renamed = (text: string, rename: (key: string, index: number) => string) => {
  const value = whole(text) as { members: Record<string, unknown>; sites: Record<string, { member?: string }> }
  const names = new Map(Object.keys(value.members).map((key, i) => [key, rename(key, i)]))
  const members: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value.members)) members[names.get(key)!] = member
  for (const site of Object.values(value.sites)) if (site.member !== undefined) site.member = names.get(site.member)!
  return dump({ ...value, members }, { schema: CORE_SCHEMA, lineWidth: -1 })
}

describe("reading a bundle in parts", () => {
  const large = Generate.bundle({ community: "parts", members: 1200 })

  it("gives the value of one parse, in several parts, key order included", () => {
    const parted = partition(large)
    expect(parted).toBeDefined()
    const members = parted!.sections.find((s) => s.name === "members")!
    expect(members.parts.length).toBeGreaterThan(large.length / partBytes / 2)
    same(loadInParts(large, limits), whole(large))
    same(loadInParts(exampleText, limits), whole(exampleText))
    const numbered = renamed(Generate.bundle({ community: "n", members: 40 }), (key, i) => (i % 2 === 0 ? String(40 - i) : key))
    expect(partition(numbered)).toBeDefined()
    same(loadInParts(numbered, limits), whole(numbered))
  })

  it("reads layouts block style allows: comments, blank lines, multi-line and block scalars, flow collections", () => {
    const text = [
      "# a bundle",
      "version: '1.0'",
      "schema_version: \"0.4\"",
      "members:",
      "",
      "  # the first",
      "  a:",
      "    name: a long",
      "      plain name",
      "    note: |",
      "      line one",
      "",
      "      line two",
      "    quoted: \"two",
      "      lines\"",
      "# at column 0 inside the section",
      "  b: {x: [1,",
      "      2]}",
      "  '10': {}",
      "  \"2\": null",
      "community:",
      "  id: c",
      "sites:",
      "    s1:",
      "      name: x",
      "extra: 1"
    ].join("\n")
    expect(partition(text)?.sections.map((s) => s.name)).toEqual(["members", "sites"])
    same(loadInParts(text, limits), whole(text))
  })

  it("declines whatever it cannot read the same way, and the one parse decides", () => {
    const declined = [
      "members:\n  a: &x {n: 1}\n  b: *x\n", // anchors and aliases
      "members:\n  - a\n  - b\n", // a list
      "members:\n    a: 1\n  b: 2\n", // an entry less indented than the first
      "members:\r\n  a: 1\r\n", // CRLF
      "%YAML 1.2\n---\nmembers:\n  a: 1\n", // directives
      "version: 1\n" // nothing to part
    ]
    for (const text of declined) expect(loadInParts(text, limits)).toBeUndefined()
    // A key given twice in different parts: the one parse reports it, with its line.
    const filler = Array.from({ length: 4000 }, (_, i) => `  k${i}:\n    name: "${"x".repeat(60)}"`).join("\n")
    const twice = `members:\n  dup:\n    name: a\n${filler}\n  dup:\n    name: b\n`
    expect(partition(twice)!.sections[0]!.parts.length).toBeGreaterThan(1)
    expect(loadInParts(twice, limits)).toBeUndefined()
    const result = loadYaml(twice, limits)
    expect(result._tag).toBe("Syntax")
    expect(result._tag === "Syntax" && result.line).toBe(8004)
    // A malformed entry: the one parse's message and line.
    const broken = "version: 1\nmembers:\n  a: [1\n  b: 2\n"
    expect(loadInParts(broken, limits)).toBeUndefined()
    const reported = loadYaml(broken, limits)
    expect(reported._tag).toBe("Syntax")
    expect(reported._tag === "Syntax" && reported.line).toBeGreaterThanOrEqual(3)
  })

  it("applies the depth limit at the same level as one parse", () => {
    const nested = (levels: number) => {
      let value: unknown = 1
      for (let i = 0; i < levels; i++) value = { n: value }
      return dump({ version: "1", members: { a: value } }, { schema: CORE_SCHEMA })
    }
    for (const levels of [5, 6, 7]) {
      const text = nested(levels)
      for (const maxDepth of [6, 7, 8]) {
        const small = { ...limits, maxDepth }
        const one = (() => {
          try {
            return { value: load(text, { schema: CORE_SCHEMA, maxDepth }) }
          } catch {
            return "refused"
          }
        })()
        const parted = loadInParts(text, small)
        if (one === "refused") expect(parted).toBeUndefined()
        else same(parted, one.value)
      }
    }
  })
})

/** The stored records of a plan, as the export reads them. */
const stored = (plan: Plan.Plan): BundleExport.StoredCommunity => {
  const memberKey = new Map(plan.memberships.map((m) => [m.id, m.key]))
  const community: CommunityRecord = { ...plan.community, topology: plan.community.topology as never, imported_at: "", member_count: 0 }
  const members: Array<MemberRecord> = plan.memberships.map((m) => {
    const p = plan.participants.find((x) => x.id === m.participant_id)!
    return { ...m, user_id: p.user_id, name: p.name, type: p.type, type_iri: p.type_iri, delivery_points: m.delivery_points as never, asset_count: 0 }
  })
  const meters = new Map(plan.meters.map((m) => [m.asset_id, m]))
  const assets: Array<AssetRecord> = plan.assets.map((a) => {
    const m = meters.get(a.id)
    return { ...a, sensor_id: m?.sensor_id ?? null, meter_type: m?.meter_type ?? null, pod: m?.pod ?? null, protocol: m?.protocol ?? null }
  })
  const sites: Array<SiteRecord> = plan.sites.map((s) => ({
    ...s,
    location: s.location as never,
    member_key: s.member_id === null ? null : memberKey.get(s.member_id)!
  }))
  return { community, members, assets, sites }
}

const paged = (s: BundleExport.StoredCommunity, pageSize: number) =>
  Effect.runSync(BundleExport.pagedYaml(s.community, {
    memberKeys: s.members.map((m) => m.key).reverse(),
    siteKeys: s.sites.map((x) => x.key),
    members: (keys) =>
      Effect.succeed(new Map(keys.map((key) => {
        const member = s.members.find((m) => m.key === key)!
        return [key, BundleExport.memberEntry(member, s.assets.filter((a) => a.member_id === member.id).reverse())]
      }))),
    sites: (keys) => Effect.succeed(new Map(keys.map((key) => [key, BundleExport.siteEntry(s.sites.find((x) => x.key === key)!)])))
  }, pageSize))

describe("the export written page by page", () => {
  const checker = Bundles.make({ limits: { ...limits }, knownOwner: () => true })
  const planOf = (text: string) => {
    const checked = checker.checkText(text)
    if (checked._tag === "Left" || checked.right.plan === undefined) throw new Error(JSON.stringify(checked))
    return checked.right.plan
  }

  it("is byte for byte the whole-bundle writer's text", () => {
    const numbered = renamed(Generate.bundle({ community: "n", members: 23 }), (key, i) => (i % 3 === 0 ? String(100 - i) : key))
    for (const text of [exampleText, Generate.bundle({ community: "g", members: 17 }), numbered]) {
      const s = stored(planOf(text))
      const expected = BundleExport.toYaml(BundleExport.toBundle(s))
      for (const pageSize of [1, 4, 1000]) expect(paged(s, pageSize)).toBe(expected)
    }
  })

  it("writes an empty community as the whole-bundle writer does", () => {
    const s = stored(planOf(exampleText))
    const empty = { ...s, members: [], assets: [], sites: [] }
    expect(paged(empty, 10)).toBe(BundleExport.toYaml(BundleExport.toBundle(empty)))
  })
})
