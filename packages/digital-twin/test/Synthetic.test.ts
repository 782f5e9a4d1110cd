/**
 * Synthetic communities: generated members served like the simulated community's (profile,
 * meter, settlement, forecast), the same for the same seed, and the environment form
 * `DIGITAL_TWIN_SYNTHETIC_COMMUNITIES=<id>:<members>,...`.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Either } from "effect"
import { parseSyntheticCommunities } from "../src/simulator/Config.js"
import { Simulator } from "../src/simulator/Simulator.js"
import * as Synthetic from "../src/simulator/Synthetic.js"
import * as World from "../src/simulator/World.js"

const spec = { id: "synthetic-test", members: 250 }

describe("synthetic communities", () => {
  it("generate the same members from the same seed, with ids padded to the count", () => {
    const a = Synthetic.build("seed-1", spec)
    expect(a.participants).toHaveLength(250)
    expect(a.participants[0]!.sub).toBe("sim-synthetic-test-001")
    expect(World.meterSensorId(a.participants[249]!)).toBe("member-synthetic-test-250-meter")
    expect(Synthetic.build("seed-1", spec)).toEqual(a)
    expect(Synthetic.build("seed-2", spec).participants[0]!.pvKwp).not.toBe(a.participants[0]!.pvKwp)
    for (const p of a.participants) expect(p.pvKwp).toBeGreaterThanOrEqual(6)
    expect(() => Synthetic.build("seed-1", { id: "x", members: 0 })).toThrow(RangeError)
  })

  it.live("are served like the simulated community", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator
      const member = Synthetic.participantSub(spec.id, 7, spec.members)
      const profile = yield* sim.profile(member)
      expect(profile.membership?.community.key).toBe(spec.id)
      const meter = (yield* sim.assets(member)).items[0]!.sensor_id!
      const yesterday = Date.UTC(2026, 7, 16)
      const rows = yield* sim.settlement(spec.id, {
        device_id: meter,
        window_start: DateTime.unsafeMake(yesterday + 10 * 3_600_000),
        window_end: DateTime.unsafeMake(yesterday + 13 * 3_600_000)
      })
      expect(rows.count).toBe(3)
      // A meter of another community is not this community's.
      const other = yield* Effect.flip(sim.settlement(World.community.id, {
        device_id: meter,
        window_start: DateTime.unsafeMake(yesterday),
        window_end: DateTime.unsafeMake(yesterday + 3_600_000)
      }))
      expect(other._tag).toBe("NotFound")
      expect((yield* sim.community(spec.id)).participants).toHaveLength(250)
    }).pipe(Effect.provide(Simulator.layer({ syntheticCommunities: [spec] }))))

  it("are read from the environment form", () => {
    expect(parseSyntheticCommunities("bench:10000, it-second:8")).toEqual(
      Either.right([{ id: "bench", members: 10000 }, { id: "it-second", members: 8 }])
    )
    expect(parseSyntheticCommunities("")).toEqual(Either.right([]))
    expect(Either.isLeft(parseSyntheticCommunities("bench"))).toBe(true)
    expect(Either.isLeft(parseSyntheticCommunities("bench:0"))).toBe(true)
    expect(Either.isLeft(parseSyntheticCommunities("bad id:3"))).toBe(true)
  })
})
