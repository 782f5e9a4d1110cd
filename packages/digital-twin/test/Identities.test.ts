/**
 * The simulator's world and dev/identities.yaml describe the same people and networks: every
 * DSO organization is a network the simulator serves, and every member of the community's
 * organization is a participant with meter data. A drift would hand out dev tokens that read
 * nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { NodeFileSystem } from "@effect/platform-node"
import { loadIdentities } from "@rec/dev-idp"
import { Effect } from "effect"
import * as World from "../src/simulator/World.js"

const identities = loadIdentities().pipe(Effect.provide(NodeFileSystem.layer))

describe("dev identities and the simulated world", () => {
  it.effect("every DSO organization is a simulated network and vice versa", () =>
    Effect.gen(function*() {
      const { organizations } = yield* identities
      const dsos = [...organizations.values()].filter((o) => o.type === "dso").map((o) => o.alias).sort()
      expect(World.networks.map((n) => n.id).sort()).toEqual(dsos)
    }))

  it.effect("every community is an organization, and its member users are its participants", () =>
    Effect.gen(function*() {
      const { organizations, users } = yield* identities
      for (const community of World.communities) {
        expect(organizations.get(community.id)?.type).toBe("rec")
        const members = [...users.values()].filter((u) => u.organizations.includes(community.id))
        expect(members.length).toBeGreaterThanOrEqual(2)
        for (const user of members) {
          const participant = community.participants.find((p) => p.sub === user.id)
          expect(participant, `${user.username} has no simulated meters`).toBeDefined()
          expect(participant!.name).toBe(user.fullName)
        }
      }
      expect(World.findNetwork(World.community.networkId)).toBeDefined()
    }))

  it.effect("simulated-only participants do not collide with dev users", () =>
    Effect.gen(function*() {
      const { users } = yield* identities
      const subs = new Set([...users.values()].map((u) => u.id))
      const simulatedOnly = World.community.participants.filter((p) => !subs.has(p.sub))
      expect(simulatedOnly.length).toBeGreaterThan(0)
      const keys = World.community.participants.map((p) => p.memberKey)
      expect(new Set(keys).size).toBe(keys.length)
    }))
})
