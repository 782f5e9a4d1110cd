/**
 * The merged, validated owner registry and its lookups. Build one with `Loader.ts`
 * (`loadRegistry`, `decodeRegistry`); the checks there guarantee that ids and aliases are
 * unique across the registry and that no two owners share a DID or a URL, so every lookup
 * names at most one owner.
 */
import { Option } from "effect"
import type { Owner } from "./OwnerSchema.js"

/** Where a registry entry was defined (the file that won, for entries an overlay replaced). */
export interface OwnerSource {
  readonly file: string
  readonly line: number
  /** Index in that file's `owners` list. */
  readonly index: number
}

export interface RegistryEntry {
  readonly owner: Owner
  readonly source: OwnerSource
  /** Files whose entry with the same id this one replaced, in load order. */
  readonly replaces: ReadonlyArray<string>
}

export class OwnerRegistry {
  private readonly byKey = new Map<string, RegistryEntry>()
  private readonly byDid = new Map<string, RegistryEntry>()
  private readonly byUrl = new Map<string, RegistryEntry>()

  /**
   * Callers outside this package get registries from the loader, which has checked the
   * uniqueness this index relies on; a clash here would silently shadow an owner.
   */
  constructor(readonly entries: ReadonlyArray<RegistryEntry>) {
    for (const entry of entries) {
      const { owner } = entry
      for (const key of [owner.id, ...owner.aliases]) this.byKey.set(key, entry)
      if (owner.did !== undefined) this.byDid.set(owner.did, entry)
      if (owner.url !== undefined) this.byUrl.set(normalizeUrl(owner.url), entry)
    }
  }

  static readonly empty = new OwnerRegistry([])

  /** Every owner, in file order (owners.yaml order, then additions from later files). */
  get owners(): ReadonlyArray<Owner> {
    return this.entries.map((entry) => entry.owner)
  }

  get size(): number {
    return this.entries.length
  }

  /** The owner with this id (aliases not considered). */
  get(id: string): Option.Option<Owner> {
    const entry = this.byKey.get(id)
    return entry !== undefined && entry.owner.id === id ? Option.some(entry.owner) : Option.none()
  }

  /**
   * The owner a reference names: an id or alias (as in a governance ownership block's
   * `name`), a DID, or a URL (compared after normalising scheme and host case and a trailing
   * slash).
   */
  lookup(reference: string): Option.Option<Owner> {
    return Option.map(this.lookupEntry(reference), (entry) => entry.owner)
  }

  lookupEntry(reference: string): Option.Option<RegistryEntry> {
    const entry = this.byKey.get(reference) ?? this.byDid.get(reference) ?? this.byUrl.get(normalizeUrl(reference))
    return Option.fromNullable(entry)
  }

  /** Owners for which `owners sync-orgs` provisions an identity-provider organization. */
  get provisioned(): ReadonlyArray<Owner> {
    return this.owners.filter((owner) => owner.organization?.create === true)
  }
}

/** `HTTPS://Example.org/` and `https://example.org` name the same homepage. */
export const normalizeUrl = (url: string): string => {
  let href: string
  try {
    href = new URL(url).href
  } catch {
    href = url
  }
  return href.endsWith("/") ? href.slice(0, -1) : href
}
