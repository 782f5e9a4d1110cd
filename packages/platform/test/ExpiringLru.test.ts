import { describe, expect, it } from "@effect/vitest"
import { ExpiringLru } from "@rec/platform"

const entry = (value: string, expiresAt: number) => ({ value, expiresAt })

describe("ExpiringLru", () => {
  it("answers an entry until its expiry time, then drops it", () => {
    let now = 0
    const map = new ExpiringLru.ExpiringLru<ReturnType<typeof entry>>(10, () => now)
    map.set("a", entry("A", 100))
    now = 99
    expect(map.get("a")?.value).toBe("A")
    now = 100
    expect(map.get("a")).toBeUndefined()
    expect(map.size).toBe(0)
  })

  it("evicts the least recently used entry, counting lookups as use", () => {
    const map = new ExpiringLru.ExpiringLru<ReturnType<typeof entry>>(2, () => 0)
    map.set("a", entry("A", 1))
    map.set("b", entry("B", 1))
    expect(map.get("a")?.value).toBe("A")
    map.set("c", entry("C", 1))
    expect(map.get("b")).toBeUndefined()
    expect(map.get("a")?.value).toBe("A")
    expect(map.get("c")?.value).toBe("C")
    expect(map.size).toBe(2)
  })

  it("replaces an entry stored again under its key, and deletes and clears", () => {
    const map = new ExpiringLru.ExpiringLru<ReturnType<typeof entry>>(2, () => 0)
    map.set("a", entry("A", 1))
    map.set("a", entry("A2", 1))
    expect(map.size).toBe(1)
    expect(map.get("a")?.value).toBe("A2")
    map.set("b", entry("B", 1))
    map.delete("a")
    expect(map.get("a")).toBeUndefined()
    map.clear()
    expect(map.size).toBe(0)
  })
})
