/**
 * `REGISTRY_SEED_BUNDLE`: the demo community is there when the registry starts; a community
 * already present is left alone; a seed file with problems stops the start, saying why.
 */
import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { Database } from "@rec/db"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { communityKey, exampleFile, exampleText, get, serviceLayer, tokens } from "./helpers.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-seed-"))
const write = (name: string, text: string) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

layer(serviceLayer({ env: { REGISTRY_SEED_BUNDLE: exampleFile } }), { excludeTestServices: true, timeout: "120 seconds" })("seed", (it) => {
  it.effect("imports the seed bundle at start", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("participant"))
      const reply = yield* get(`/user/communities/${communityKey}`, { token })
      expect(reply.status).toBe(200)
      expect(reply.body).toMatchObject({ member_count: 7 })
    }))

  it.scoped("leaves a community that is already there alone; refuses a seed file with problems", () =>
    Effect.gen(function*() {
      // Another registry (with its own identity provider) on the same database, seeded with a
      // smaller version of the community.
      const database = Layer.succeedContext(yield* Effect.context<Database.Database | SqlClient>())
      const smaller = write("smaller.yaml", exampleText.replace(/ {2}member-chiara-esposito:\n(?: {4}.*\n)+/, ""))
      yield* Layer.build(serviceLayer({ database, env: { REGISTRY_SEED_BUNDLE: smaller } }))
      const sql = yield* SqlClient
      const [row] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM membership WHERE community_key = ${communityKey}`
      expect(Number(row?.n)).toBe(7)

      const broken = write("broken.yaml", exampleText.replace("role: producer", "role: owner"))
      const exit = yield* Effect.exit(Layer.build(serviceLayer({ database, env: { REGISTRY_SEED_BUNDLE: broken } })))
      expect(Exit.isFailure(exit)).toBe(true)
      const message = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
      expect(message).toContain(`REGISTRY_SEED_BUNDLE ${broken} has 1 problem:`)
      expect(message).toContain("members.member-comune-arco.role: expected one of producer, consumer, prosumer, got \"owner\" [schema]")
      const missing = yield* Effect.exit(Layer.build(serviceLayer({ database, env: { REGISTRY_SEED_BUNDLE: path.join(dir, "none.yaml") } })))
      expect(Exit.isFailure(missing) ? Cause.pretty(missing.cause) : "").toContain("cannot be read")
    }).pipe(Effect.orDie))
})
