/**
 * The example bundle is the simulator's community (so the demo works end to end): the same
 * community id, member keys, identity-provider subjects, roles, delivery points and meter sensor
 * ids as `packages/digital-twin/src/simulator/World.ts`, and its participant users are the
 * participants of `dev/identities.yaml`. The migrations are well formed.
 */
import { Migrations } from "@rec/db"
import { parseIdentities } from "@rec/dev-idp/Identities"
import { community, meterSensorId } from "@rec/digital-twin/simulator/World"
import { Bundles, Config, migrations } from "@rec/registry-service"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { exampleText, repoRoot } from "./helpers.js"

const checker = Bundles.make({ limits: Config.defaultLimits, knownOwner: () => false })
const plan = (() => {
  const checked = checker.checkText(exampleText)
  if (checked._tag === "Left" || checked.right.plan === undefined) throw new Error("the example bundle does not validate")
  return checked.right.plan
})()

describe("examples/it-energy-community.bundle.yaml", () => {
  it("is the simulator's community, member for member", () => {
    expect(plan.community.key).toBe(community.id)
    const members = plan.memberships.map((m) => {
      const participant = plan.participants.find((p) => p.id === m.participant_id)!
      const points = m.delivery_points.map((p) => (p as { id: string }).id)
      const meters = plan.assets.filter((a) => a.member_id === m.id && a.asset_type === "meter").map((a) => plan.meters.find((x) => x.asset_id === a.id)!)
      const pv = plan.assets.filter((a) => a.member_id === m.id && a.asset_type === "pv")
      return { key: m.key, sub: participant.user_id, name: participant.name, role: m.role, points, sensors: meters.map((x) => x.sensor_id), pods: meters.map((x) => x.pod), pv: pv.map((a) => a.properties["rated_power"]) }
    })
    expect(members.sort((a, b) => a.key.localeCompare(b.key))).toEqual(
      community.participants.map((p) => ({
        key: p.memberKey,
        sub: p.sub,
        name: p.name,
        role: p.role,
        points: [p.pod],
        sensors: [meterSensorId(p)],
        pods: [p.pod],
        pv: p.pvKwp > 0 ? [p.pvKwp] : []
      })).sort((a, b) => a.key.localeCompare(b.key))
    )
  })

  it("its members include the dev identity provider's participant users, by their sub", async () => {
    const identities = await Effect.runPromise(parseIdentities(fs.readFileSync(path.join(repoRoot, "dev/identities.yaml"), "utf8")))
    const participants = [...identities.users.values()].filter((u) => u.organizations.includes(community.id))
    expect(participants.map((u) => u.username).sort()).toEqual(["participant", "participant-consumer"])
    const subs = new Set(plan.participants.map((p) => p.user_id))
    for (const user of participants) expect(subs.has(user.id), user.username).toBe(true)
  })
})

describe("migrations", () => {
  it("are a valid, ordered set", () => {
    expect(Migrations.validate(migrations).problems).toEqual([])
  })
})
