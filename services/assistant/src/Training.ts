/**
 * Training materials: the Markdown files of a git repository (`TRAINING_MATERIALS_REPO`, a local
 * path or an https URL; optionally only `TRAINING_MATERIALS_SUBDIR`), shared with every user.
 *
 * A sync clones the repository into `TRAINING_MATERIALS_PATH` (or fetches into the existing
 * checkout, refusing one with local changes), checks out the requested ref, and brings the store
 * in line with its Markdown files by content hash: new files are added, changed ones ingested
 * again (their old chunks and vectors replaced), deleted ones removed, unchanged ones left
 * alone. Files are parsed and embedded before the database is touched; the database changes are
 * one transaction, under an advisory lock so replicas never interleave two syncs. One sync at a
 * time per process; another request meanwhile gets 409.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as SqlClient from "@effect/sql/SqlClient"
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AttachmentsRepo } from "./AttachmentsRepo.js"
import * as Config from "./Config.js"
import type * as Domain from "./Domain.js"
import * as Git from "./Git.js"
import { Ingest, type Prepared, sha256 } from "./Ingest.js"
import { Retrieval } from "./Retrieval.js"
import { FileStore } from "./Storage.js"

const refPattern = /^(?!-)[A-Za-z0-9._/@^~-]+$/

interface MarkdownFile {
  readonly location: string
  readonly filename: string
  readonly bytes: Uint8Array
  readonly sha256: string
}

export class Training extends Effect.Service<Training>()("@rec/assistant-service/Training", {
  effect: Effect.gen(function*() {
    const settings = yield* Config.training
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const executor = yield* CommandExecutor.CommandExecutor
    const sql = yield* SqlClient.SqlClient
    const attachments = yield* AttachmentsRepo
    const ingest = yield* Ingest
    const store = yield* FileStore
    const retrieval = yield* Retrieval
    const lock = yield* Effect.makeSemaphore(1)
    const checkout = path.resolve(settings.path)

    const git = (args: ReadonlyArray<string>, cwd: string = checkout) =>
      Git.run(args, { cwd }).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))

    const conflict = (detail: string) => new HttpErrors.Conflict({ detail })
    const upstream = (repository: string) => (e: Git.GitFailed) =>
      new HttpErrors.BadGateway({ detail: `git ${e.operation} of the training-materials repository ${Git.redact(repository)} failed: ${e.message}` })

    /** The repository checked out at `target`: clone or fetch, then a detached checkout. */
    const update = (repository: Git.Repository, display: string, target: string) =>
      Effect.gen(function*() {
        const exists = yield* fs.exists(checkout)
        const empty = !exists || (yield* fs.readDirectory(checkout)).length === 0
        let previous: string | null = null
        if (empty) {
          yield* fs.makeDirectory(path.dirname(checkout), { recursive: true })
          yield* git(["clone", "--no-checkout", "--quiet", "--", Git.repositoryArgument(repository), checkout], path.dirname(checkout)).pipe(
            Effect.mapError(upstream(display))
          )
        } else {
          const top = yield* git(["rev-parse", "--show-toplevel"]).pipe(Effect.option)
          if (Option.isNone(top) || path.resolve(top.value.trim()) !== checkout) {
            return yield* Effect.fail(conflict(`TRAINING_MATERIALS_PATH (${checkout}) exists and is not a git checkout; empty it or choose another path`))
          }
          const status = yield* git(["status", "--porcelain"]).pipe(Effect.mapError(upstream(display)))
          if (status.trim() !== "") {
            return yield* Effect.fail(conflict(`The checkout in ${checkout} has local changes; commit, stash or remove them before syncing`))
          }
          previous = Option.getOrNull(Option.map(yield* git(["rev-parse", "--verify", "--quiet", "HEAD"]).pipe(Effect.option), (s) => s.trim()))
          yield* git(["remote", "set-url", "origin", Git.repositoryArgument(repository)]).pipe(Effect.mapError(upstream(display)))
          yield* git(["fetch", "--prune", "--tags", "--quiet", "origin"]).pipe(Effect.mapError(upstream(display)))
        }
        const commit = yield* git(["rev-parse", "--verify", "--quiet", `${target}^{commit}`]).pipe(
          Effect.map((s) => s.trim()),
          Effect.catchAll(() =>
            Effect.fail(new HttpErrors.UnprocessableEntity({
              detail: `The ref "${target}" does not exist in the training-materials repository ${display}`
            })))
        )
        yield* git(["checkout", "--detach", "--force", "--quiet", commit]).pipe(Effect.mapError(upstream(display)))
        return { previous, current: commit }
      })

    /** Every Markdown file under `root` (dot folders skipped), sorted by location. */
    const markdownFiles = (root: string) =>
      Effect.gen(function*() {
        const out: Array<MarkdownFile> = []
        const walk = (dir: string): Effect.Effect<void, unknown> =>
          Effect.gen(function*() {
            const entries = (yield* fs.readDirectory(dir)).sort()
            for (const entry of entries) {
              if (entry.startsWith(".")) continue
              const full = path.join(dir, entry)
              const info = yield* fs.stat(full)
              if (info.type === "Directory") yield* walk(full)
              else if (info.type === "File" && /\.md$/i.test(entry)) {
                const bytes = yield* fs.readFile(full)
                const relative = path.relative(root, full).split(path.sep).join("/")
                out.push({ location: relative.replace(/\.md$/i, ""), filename: entry, bytes, sha256: sha256(bytes) })
              }
            }
          })
        yield* walk(root)
        return out.sort((a, b) => (a.location < b.location ? -1 : a.location > b.location ? 1 : 0))
      })

    /** Brings the shared training materials in line with the Markdown files under `root`. */
    const ingestFiles = (root: string) =>
      Effect.gen(function*() {
        const files = yield* markdownFiles(root).pipe(
          Effect.mapError(() => conflict(`The training materials folder ${root} cannot be read`))
        )
        const known = yield* attachments.trainingMaterials
        const seen = new Set(files.map((f) => f.location))
        const added: Array<{ file: MarkdownFile; prepared: Prepared }> = []
        const changed: Array<{ file: MarkdownFile; prepared: Prepared; id: string; key: string; ownerId: string | null }> = []
        let unchanged = 0
        for (const file of files) {
          const row = known.get(file.location)
          if (row !== undefined && row.sha256 === file.sha256) {
            unchanged++
            continue
          }
          const prepared = yield* ingest.prepareAs("markdown", file.bytes, file.filename)
          if (row === undefined) added.push({ file, prepared })
          else changed.push({ file, prepared, id: row.id, key: row.storageKey, ownerId: row.ownerId })
        }
        const removed = [...known.values()].filter((row) => !seen.has(row.location ?? ""))

        const created: Array<string> = []
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(hashtext('@rec/assistant-service:training'))`
          for (const row of removed) yield* attachments.remove(row.id)
          for (const c of changed) {
            yield* store.put(c.key, c.file.bytes)
            const row = yield* Effect.orDie(Effect.flatten(attachments.find(c.id)))
            yield* ingest.replaceChunks(row, c.prepared)
            yield* attachments.updateTraining(c.id, {
              sha256: c.prepared.sha256,
              sizeBytes: c.prepared.sizeBytes,
              title: c.prepared.title,
              status: c.prepared.status,
              chunkCount: c.prepared.chunks.length,
              filename: c.file.filename
            })
          }
          for (const a of added) {
            const row = yield* ingest.create({
              ownerId: null,
              source: "training_material",
              filename: a.file.filename,
              location: a.file.location,
              bytes: a.file.bytes,
              prepared: a.prepared
            })
            created.push(row.storageKey)
          }
        })).pipe(
          // A failed transaction keeps nothing: the files of the new rows go too.
          Effect.tapError(() => Effect.forEach(created, (key) => store.remove(key).pipe(Effect.ignore)))
        )
        // The rows are gone; their files go after the commit (a leftover file is harmless).
        yield* Effect.forEach(removed, (row) => store.remove(row.storageKey).pipe(Effect.ignore), { discard: true })
        // Many chunks may have changed: the full-text search's term statistics with them.
        if (added.length + changed.length + removed.length > 0) yield* retrieval.refreshStats(true)
        return {
          root,
          added: added.length,
          updated: changed.length,
          removed: removed.length,
          unchanged,
          chunks: [...added, ...changed].reduce((n, x) => n + x.prepared.chunks.length, 0)
        }
      })

    const sync = Effect.fn("Training.sync")(function*(targetRef: string | undefined) {
      const configured = settings.repository
      if (Option.isNone(configured)) {
        return yield* Effect.fail(conflict("No training-materials repository is configured: set TRAINING_MATERIALS_REPO to a local path or an https URL"))
      }
      const display = Git.redact(configured.value)
      const repository = Git.parseRepository(configured.value)
      if (repository === undefined) {
        return yield* Effect.fail(conflict(
          `TRAINING_MATERIALS_REPO (${display}) is neither a local path nor an https URL; other protocols are not allowed`
        ))
      }
      const target = targetRef ?? settings.ref
      if (!refPattern.test(target)) {
        return yield* Effect.fail(new HttpErrors.BadRequest({ detail: `"${target}" is not a valid git ref` }))
      }
      const run = Effect.gen(function*() {
        const git = yield* update(repository, display, target).pipe(
          Effect.catchTags({ SystemError: (e) => Effect.fail(conflict(`TRAINING_MATERIALS_PATH: ${e.message}`)), BadArgument: Effect.die })
        )
        const root = path.join(checkout, settings.subdir)
        const result = yield* ingestFiles(root)
        const response: Domain.TrainingSyncResponse = {
          status: "ok",
          git: {
            repository: display,
            path: checkout,
            target,
            previous_commit: git.previous,
            current_commit: git.current,
            updated: git.previous !== git.current
          },
          ingest: result
        }
        yield* Effect.logInfo("training materials synchronised").pipe(
          Effect.annotateLogs({ commit: git.current, ...result })
        )
        return response
      })
      const attempt = yield* lock.withPermitsIfAvailable(1)(run)
      if (Option.isNone(attempt)) return yield* Effect.fail(conflict("A training-materials sync is already running; try again when it has finished"))
      return attempt.value
    })

    return { sync, configured: Option.isSome(settings.repository), syncOnStart: settings.syncOnStart } as const
  })
}) {}

/** Syncs in the background at start when a repository is configured (`TRAINING_MATERIALS_SYNC_ON_START`). */
export const syncOnStart: Layer.Layer<never, never, Training> = Layer.scopedDiscard(
  Effect.gen(function*() {
    const training = yield* Training
    if (!training.configured || !training.syncOnStart) return
    yield* training.sync(undefined).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("training materials sync at start failed", cause)),
      Effect.forkScoped
    )
  })
)
