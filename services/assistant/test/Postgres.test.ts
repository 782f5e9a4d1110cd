/**
 * On a PostgreSQL server without pgvector (the machine's Debian PostgreSQL 15 has no `vector`
 * package) the assistant does not start, and says why: the migrations stop with a message naming
 * the extension, and so does the service started on a database whose migrations were not run.
 * (Vector SQL itself runs on PGlite, which ships the extension, in every other test.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Testing } from "@rec/db"
import { Http, migrations } from "@rec/assistant-service"
import * as Embedder from "@rec/assistant-service/Embedder"
import * as Storage from "@rec/assistant-service/Storage"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { TokenVerifier } from "@rec/auth"
import { Engines } from "@rec/policy"
import { repoPolicies, tempDir } from "./helpers.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Cause from "effect/Cause"
import * as Logger from "effect/Logger"

const skip = await Testing.postgresSkipReason()
const hasVector = skip === undefined ? await Testing.postgresHasExtension("vector") : false

const reason = skip ?? (hasVector ? "this PostgreSQL has pgvector; the refusal cannot be observed" : undefined)

const failureOf = <A, E>(layer: Layer.Layer<A, E>) =>
  Effect.scoped(Layer.build(layer)).pipe(
    Effect.exit,
    Effect.map((exit) => (Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "started")),
    Effect.provide(Logger.remove(Logger.defaultLogger))
  )

describe.skipIf(reason !== undefined)(`on PostgreSQL without pgvector${reason === undefined ? "" : ` (skipped: ${reason})`}`, () => {
  it.live("the migrations stop with a message naming the extension", () =>
    Effect.gen(function*() {
      const message = yield* failureOf(Testing.layerPostgres({ service: "assistant", migrations }))
      expect(message).toContain("The assistant needs the PostgreSQL extension \"vector\" (pgvector)")
      expect(message).toContain("Install pgvector on the server")
    }), { timeout: 60_000 })

  it.live("the service does not start on a database without the extension", () =>
    Effect.gen(function*() {
      const database = Testing.layerPostgres({ service: "assistant", migrations, config: { migrate: false } })
      const message = yield* failureOf(Http.makeTest({
        database,
        embedder: Embedder.local(64),
        // Never asked: the service stops before it serves anything.
        verifier: TokenVerifier.layerFor("http://127.0.0.1:9"),
        engine: Engines.embeddedWith({ directory: repoPolicies, watch: false }),
        storage: Storage.folder(tempDir("pg")).pipe(Layer.provide(NodeContext.layer))
      }))
      expect(message).toContain("VectorExtensionMissing")
      expect(message).toContain("The assistant needs the PostgreSQL extension \"vector\" (pgvector)")
    }), { timeout: 60_000 })
})
