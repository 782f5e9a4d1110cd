/**
 * The owner registry as an Effect service, for services that emit organizations (the community
 * registry's DCAT-AP / JSON-LD output, governance ownership blocks).
 *
 * Configuration (env, read in `Config.ts`):
 * - `OWNERS_FILE`: the registry file (default `./owners.yaml`); its `owners.local.yaml`
 *   sibling is loaded on top when it exists. When `OWNERS_FILE` is unset and `./owners.yaml`
 *   does not exist the registry is empty (a warning is logged); an explicitly configured file
 *   that is missing is an error.
 * - `PLATFORM_BASE_URL`: base of the IRIs minted for owners without a DID or URL
 *   (`{PLATFORM_BASE_URL}/owners/{id}`), default `http://localhost:8004` (the community
 *   registry, which publishes the organizations).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer, Option, Schema } from "effect"
import { DEFAULT_OWNERS_FILE, DEFAULT_PLATFORM_BASE_URL, OwnersConfig } from "./Config.js"
import { type AgentNode, ownerIri, toAgentNode } from "./JsonLd.js"
import { loadRegistry, registryFilesFor } from "./Loader.js"
import type { Owner } from "./OwnerSchema.js"
import { OwnerRegistry } from "./Registry.js"

/** No owner has this id, alias, DID or URL. */
export class OwnerNotFound extends Schema.TaggedError<OwnerNotFound>()("OwnerNotFound", {
  reference: Schema.String
}) {
  override get message(): string {
    return `no owner with id, alias, DID or URL ${JSON.stringify(this.reference)}`
  }
}

/** The service's operations over one loaded registry. */
export const makeOwners = (registry: OwnerRegistry, options: { readonly baseUrl: string }) => {
  const agent = (owner: Owner): AgentNode => toAgentNode(owner, options)
  return {
    registry,
    baseUrl: options.baseUrl,
    /** Every owner, in registry order. */
    all: (): ReadonlyArray<Owner> => registry.owners,
    /** The owner an id, alias, DID or URL names. */
    lookup: (reference: string): Option.Option<Owner> => registry.lookup(reference),
    /** Like `lookup`, failing with `OwnerNotFound`. */
    resolve: (reference: string): Effect.Effect<Owner, OwnerNotFound> =>
      Option.match(registry.lookup(reference), {
        onNone: () => Effect.fail(new OwnerNotFound({ reference })),
        onSome: Effect.succeed
      }),
    /** The owner's canonical IRI (DID, else URL, else under the platform base URL). */
    iri: (owner: Owner): string => ownerIri(owner, options.baseUrl),
    /** The owner as a JSON-LD `foaf:Agent` node with expanded IRIs. */
    agent,
    /** The JSON-LD node of the owner a reference names (a governance ownership `name`). */
    agentFor: (reference: string): Option.Option<AgentNode> => Option.map(registry.lookup(reference), agent)
  }
}

export class Owners extends Effect.Service<Owners>()("@rec/owners/Owners", {
  effect: Effect.gen(function*() {
    const config = yield* OwnersConfig
    const fs = yield* FileSystem.FileSystem
    const file = Option.getOrElse(config.file, () => DEFAULT_OWNERS_FILE)
    if (Option.isNone(config.file) && !(yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false)))) {
      yield* Effect.logWarning(
        `owner registry: OWNERS_FILE is not set and ${file} does not exist; no owners are known`
      )
      return makeOwners(OwnerRegistry.empty, config)
    }
    const files = yield* registryFilesFor(file)
    const registry = yield* loadRegistry(files)
    yield* Effect.logInfo(`owner registry: ${registry.size} owners from ${files.join(", ")}`)
    return makeOwners(registry, config)
  }),
  dependencies: [NodeFileSystem.layer]
}) {
  /** A service over a registry built in memory (tests, tools). */
  static fromRegistry(registry: OwnerRegistry, options: { readonly baseUrl?: string } = {}): Layer.Layer<Owners> {
    return Layer.succeed(
      Owners,
      Owners.make(makeOwners(registry, { baseUrl: options.baseUrl ?? DEFAULT_PLATFORM_BASE_URL }))
    )
  }
}
