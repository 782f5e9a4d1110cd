/**
 * IRIs: expanding what a bundle writes (`schema:Person`, a full IRI, a relative reference) and
 * minting the IRIs of the registry's own resources.
 *
 * The original treated any `word:` as an absolute IRI, so CURIEs were stored unexpanded
 * (`peco:Prosumer`). Here a value whose prefix the bundle declares in `context.prefixes` (or one
 * of the well-known prefixes below, which a bundle may redefine) is expanded by concatenation
 * (`https://purl.org/peco/peco-core#` + `Prosumer`, so `#` namespaces survive); a value with a
 * known URI scheme (`https:`, `urn:`, `did:`, ...) or `//` after the colon is an IRI already;
 * anything else with a colon has an unknown prefix and is a problem, never stored as written.
 * A value without a colon is resolved against `context.base_iri` when the bundle gives one.
 */
export const Namespaces = {
  celine: "https://celine-eu.github.io/ontologies/celine#",
  peco: "https://purl.org/peco/peco-core#",
  saref: "https://saref.etsi.org/core/",
  s4ener: "https://saref.etsi.org/saref4ener/",
  schema: "https://schema.org/",
  foaf: "http://xmlns.com/foaf/0.1/",
  dcterms: "http://purl.org/dc/terms/",
  dcat: "http://www.w3.org/ns/dcat#",
  geo: "http://www.w3.org/2003/01/geo/wgs84_pos#",
  hydra: "http://www.w3.org/ns/hydra/core#",
  xsd: "http://www.w3.org/2001/XMLSchema#"
} as const

/** Prefixes every bundle may use without declaring them. */
export const defaultPrefixes: Readonly<Record<string, string>> = Namespaces

/** Schemes whose values are IRIs as written (a bundle cannot use them as prefixes by accident). */
export const iriSchemes: ReadonlySet<string> = new Set([
  "http",
  "https",
  "urn",
  "did",
  "mailto",
  "tel",
  "tag",
  "ftp",
  "file",
  "data"
])

export type Expansion =
  | { readonly _tag: "Iri"; readonly iri: string }
  | { readonly _tag: "UnknownPrefix"; readonly prefix: string }
  | { readonly _tag: "NotAnIri"; readonly reason: string }

const schemeLike = /^([A-Za-z][A-Za-z0-9_+.-]*):(.*)$/s

const isAbsolute = (iri: string) => URL.canParse(iri) && !/\s/.test(iri)

/**
 * Expands a value written in a bundle. `prefixes` are the bundle's (`context.prefixes`), which
 * win over the well-known ones; `base` is `context.base_iri`.
 */
export const expand = (
  value: string,
  prefixes: Readonly<Record<string, string>> = {},
  base?: string | undefined
): Expansion => {
  const match = schemeLike.exec(value)
  if (match === null) {
    if (base === undefined) {
      return { _tag: "NotAnIri", reason: "is neither an IRI nor a CURIE, and the bundle has no context.base_iri to resolve it against" }
    }
    const resolved = URL.canParse(value, base) ? new URL(value, base).href : undefined
    return resolved === undefined || !isAbsolute(resolved)
      ? { _tag: "NotAnIri", reason: `does not resolve against context.base_iri ${base}` }
      : { _tag: "Iri", iri: resolved }
  }
  const [, prefix = "", rest = ""] = match
  // JSON-LD's rule: a suffix starting with "//" makes an IRI, never a CURIE.
  const declared = rest.startsWith("//") ? undefined : Object.hasOwn(prefixes, prefix)
    ? prefixes[prefix]
    : iriSchemes.has(prefix.toLowerCase())
    ? undefined
    : Object.hasOwn(defaultPrefixes, prefix)
    ? defaultPrefixes[prefix]
    : undefined
  if (declared !== undefined) {
    const iri = declared + rest
    return isAbsolute(iri) ? { _tag: "Iri", iri } : { _tag: "NotAnIri", reason: `expands to ${iri}, which is not an IRI` }
  }
  if (rest.startsWith("//") || iriSchemes.has(prefix.toLowerCase())) {
    return isAbsolute(value) ? { _tag: "Iri", iri: value } : { _tag: "NotAnIri", reason: "is not a valid IRI" }
  }
  return { _tag: "UnknownPrefix", prefix }
}

/** Expands a value known to be valid (checked when the bundle was validated). */
export const expandValid = (value: string, prefixes?: Readonly<Record<string, string>>, base?: string): string => {
  const result = expand(value, prefixes, base)
  if (result._tag !== "Iri") throw new Error(`unexpanded IRI ${value} reached storage`)
  return result.iri
}

const segment = (value: string) => encodeURIComponent(value)

/** The IRIs of the registry's resources, below `BASE_URL`. */
export const mint = (baseUrl: string) => {
  const community = (key: string) => `${baseUrl}/communities/${segment(key)}`
  return {
    community,
    member: (community_: string, key: string) => `${community(community_)}/members/${segment(key)}`,
    participant: (community_: string, key: string) => `${community(community_)}/participants/${segment(key)}`,
    asset: (community_: string, key: string) => `${community(community_)}/assets/${segment(key)}`,
    site: (community_: string, key: string) => `${community(community_)}/sites/${segment(key)}`,
    area: (community_: string, key: string) => `${community(community_)}/areas/${segment(key)}`,
    topologyNode: (community_: string, id: string) => `${community(community_)}/topology/${segment(id)}`,
    deliveryPoint: (community_: string, id: string) => `${community(community_)}/delivery-points/${segment(id)}`
  }
}
export type Mint = ReturnType<typeof mint>

/** `<community>.<key>`: the id of a member, asset or site (community keys have no `.`). */
export const entityId = (community: string, key: string): string => `${community}.${key}`

/** The community and key of an id, or `undefined` for an id this registry never issues. */
export const parseEntityId = (id: string): { readonly community: string; readonly key: string } | undefined => {
  const dot = id.indexOf(".")
  if (dot <= 0 || dot === id.length - 1) return undefined
  return { community: id.slice(0, dot), key: id.slice(dot + 1) }
}
