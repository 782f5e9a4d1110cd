/**
 * Object storage of the raw files, behind a tag so a bucket can replace the folder. The default
 * is a folder (`ASSISTANT_STORAGE_DIR`, default `./data/assistant/files`): files are written to
 * a temporary name and renamed, so a reader never sees half a file. Keys are made by the
 * service (`users/<hash of owner>/<attachment id>`, `shared/<attachment id>`), never from a
 * user's file name.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { createHash, randomUUID } from "node:crypto"
import * as Config from "./Config.js"

export class StorageError extends Schema.TaggedError<StorageError>()("StorageError", {
  operation: Schema.String,
  key: Schema.String,
  message: Schema.String
}) {}

export class StoredFileMissing extends Schema.TaggedError<StoredFileMissing>()("StoredFileMissing", {
  key: Schema.String
}) {}

export interface FileStoreService {
  readonly put: (key: string, bytes: Uint8Array) => Effect.Effect<void, StorageError>
  readonly get: (key: string) => Effect.Effect<Uint8Array, StorageError | StoredFileMissing>
  readonly stream: (key: string) => Effect.Effect<Stream.Stream<Uint8Array, StorageError>, StorageError | StoredFileMissing>
  /** Removing a missing file is not an error. */
  readonly remove: (key: string) => Effect.Effect<void, StorageError>
  /** Where files go, for logs. */
  readonly location: string
}

export class FileStore extends Context.Tag("@rec/assistant-service/FileStore")<FileStore, FileStoreService>() {}

const keyPattern = /^[a-z]+\/(?:[0-9a-f]{32}\/)?[0-9a-f-]{36}$/

/** The key of an attachment's file. */
export const keyOf = (ownerId: string | null, attachmentId: string): string =>
  ownerId === null
    ? `shared/${attachmentId}`
    : `users/${createHash("sha256").update(ownerId).digest("hex").slice(0, 32)}/${attachmentId}`

/** A folder on the local filesystem. */
export const folder = (root: string): Layer.Layer<FileStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    FileStore,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const base = path.resolve(root)
      const fail = (operation: string, key: string) => (error: { readonly message: string }) =>
        new StorageError({ operation, key, message: `${operation} ${key} in ${base}: ${error.message}` })

      const pathOf = (key: string) => {
        // Keys come from `keyOf`; anything else is a bug, not a path to follow.
        if (!keyPattern.test(key)) return Effect.die(new Error(`invalid storage key ${JSON.stringify(key)}`))
        return Effect.succeed(path.join(base, key))
      }

      const exists = (key: string, file: string) =>
        fs.exists(file).pipe(
          Effect.mapError(fail("read", key)),
          Effect.flatMap((found) => (found ? Effect.void : Effect.fail(new StoredFileMissing({ key }))))
        )

      return {
        location: base,
        put: (key, bytes) =>
          Effect.gen(function*() {
            const file = yield* pathOf(key)
            const temporary = `${file}.${randomUUID()}.tmp`
            yield* fs.makeDirectory(path.dirname(file), { recursive: true })
            yield* fs.writeFile(temporary, bytes).pipe(
              Effect.zipRight(fs.rename(temporary, file)),
              Effect.tapError(() => fs.remove(temporary).pipe(Effect.ignore))
            )
          }).pipe(Effect.mapError(fail("write", key)), Effect.withSpan("FileStore.put")),
        get: (key) =>
          Effect.gen(function*() {
            const file = yield* pathOf(key)
            yield* exists(key, file)
            return yield* fs.readFile(file).pipe(Effect.mapError(fail("read", key)))
          }),
        stream: (key) =>
          Effect.gen(function*() {
            const file = yield* pathOf(key)
            yield* exists(key, file)
            return fs.stream(file).pipe(Stream.mapError(fail("read", key)))
          }),
        remove: (key) =>
          Effect.gen(function*() {
            const file = yield* pathOf(key)
            yield* fs.remove(file, { force: true })
          }).pipe(Effect.mapError(fail("delete", key)))
      }
    })
  )

/** The folder of `ASSISTANT_STORAGE_DIR`. */
export const layer: Layer.Layer<FileStore, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> = Layer.unwrapEffect(
  Effect.map(Config.storageDir, folder)
)
