import { describe, expect, it } from "@effect/vitest"
import { Topic } from "@rec/mqtt"

describe("Topic", () => {
  it("matches filters the way brokers do", () => {
    const cases: Array<[string, string, boolean]> = [
      ["a/b/c", "a/b/c", true],
      ["a/+/c", "a/b/c", true],
      ["a/+/c", "a/b/d", false],
      ["a/#", "a", true],
      ["a/#", "a/b/c", true],
      ["#", "a/b", true],
      ["+", "a", true],
      ["+", "a/b", false],
      ["a/+", "a/", true],
      ["+/+", "/x", true],
      ["#", "$SYS/broker/uptime", false],
      ["+/broker/#", "$SYS/broker/uptime", false],
      ["$SYS/#", "$SYS/broker/uptime", true],
      ["$share/workers/jobs/+", "jobs/1", true],
      ["$share/workers/jobs/+", "other/1", false]
    ]
    for (const [filter, topic, expected] of cases) expect([filter, topic, Topic.matches(filter, topic)]).toEqual([filter, topic, expected])
  })

  it("validates topic names and filters", () => {
    expect(Topic.validateName("rec/alerts/n1")).toBeUndefined()
    expect(Topic.validateName("")).toBeDefined()
    expect(Topic.validateName("a/+/b")).toBeDefined()
    expect(Topic.validateName("a/#")).toBeDefined()
    expect(Topic.validateFilter("a/+/b/#")).toBeUndefined()
    expect(Topic.validateFilter("$share/g/a/#")).toBeUndefined()
    expect(Topic.validateFilter("a/#/b")).toBeDefined()
    expect(Topic.validateFilter("a/b#")).toBeDefined()
    expect(Topic.validateFilter("a/b+/c")).toBeDefined()
    expect(Topic.validateFilter("$share/g")).toBeDefined()
    expect(Topic.validateFilter("")).toBeDefined()
  })

  it("applies and strips the topic prefix, keeping shared-subscription syntax in front", () => {
    expect(Topic.withPrefix("", "a/b")).toBe("a/b")
    expect(Topic.withPrefix("tenant/", "a/b")).toBe("tenant/a/b")
    expect(Topic.withPrefix("tenant/", "$share/g/a/#")).toBe("$share/g/tenant/a/#")
    expect(Topic.withoutPrefix("tenant/", "tenant/a/b")).toBe("a/b")
    expect(Topic.withoutPrefix("tenant/", "other/a/b")).toBeUndefined()
    expect(Topic.matchingPart("$share/g/tenant/a/#")).toBe("tenant/a/#")
  })
})
