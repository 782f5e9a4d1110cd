/**
 * The import/export suite on a real PostgreSQL (`TEST_DATABASE_URL`, a fresh database per run):
 * transactions, the advisory lock of concurrent imports, `jsonb_to_recordset` inserts, triggers,
 * and the `C` collation of pages. Skipped with the reason when no server is reachable, a failure
 * under `REC_REQUIRE_SERVICES=1`.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Testing } from "@rec/db"
import { Generate, migrations } from "@rec/registry-service"
import * as Effect from "effect/Effect"
import { get, importExample, serviceLayer, tokens } from "./helpers.js"
import { importSuite } from "./support/importSuite.js"

const skip = await Testing.postgresSkipReason()

describe.skipIf(skip !== undefined)(`on PostgreSQL${skip === undefined ? "" : ` (skipped: ${skip})`}`, () => {
  const database = Testing.layerPostgres({ service: "registry", migrations, transformNames: false })

  layer(serviceLayer({ database }), { excludeTestServices: true, timeout: "180 seconds" })("bundles on PostgreSQL", (it) => {
    importSuite(it)

    it.effect("pages keep byte order whatever the server's locale", () =>
      Effect.gen(function*() {
        const text = Generate.bundle({ community: "collation", members: 3 })
          .replace(/\bm00000\b/g, "Zeta")
          .replace(/\bm00001\b/g, "alpha")
          .replace(/\bm00002\b/g, "_beta".replace("_", "B"))
        yield* importExample(text)
        const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
        const reply = yield* get("/user/communities/collation/members", { token })
        expect((reply.body as { items: Array<{ key: string }> }).items.map((m) => m.key)).toEqual(["Bbeta", "Zeta", "alpha"])
      }))
  })
})
