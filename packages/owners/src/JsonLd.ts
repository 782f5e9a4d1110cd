/**
 * Owners as JSON-LD: each owner is a `foaf:Agent` node, written with expanded IRIs so it needs
 * no `@context` and can be embedded in any JSON-LD document (for example as the
 * `dct:publisher` of a DCAT-AP dataset).
 */
import type { Owner, OwnerType } from "./OwnerSchema.js"

export const FOAF = "http://xmlns.com/foaf/0.1/"
export const SCHEMA_ORG = "https://schema.org/"

export const Foaf = {
  Agent: `${FOAF}Agent`,
  Organization: `${FOAF}Organization`,
  name: `${FOAF}name`,
  homepage: `${FOAF}homepage`
} as const

/** A `foaf:Agent` node in expanded-IRI form. */
export interface AgentNode {
  readonly "@id": string
  /** `foaf:Agent`, `foaf:Organization` and the owner's schema.org type, in that order. */
  readonly "@type": ReadonlyArray<string>
  readonly "http://xmlns.com/foaf/0.1/name": string
  readonly "http://xmlns.com/foaf/0.1/homepage"?: { readonly "@id": string }
}

/** `schema:NGO` -> `https://schema.org/NGO` */
export const schemaOrgIri = (type: OwnerType): string => `${SCHEMA_ORG}${type.slice("schema:".length)}`

/**
 * The owner's canonical IRI: its DID when set, else its URL, else
 * `{baseUrl}/owners/{id}` (a path prefix in `baseUrl` is kept).
 */
export const ownerIri = (owner: Owner, baseUrl: string): string =>
  owner.did ?? owner.url ?? new URL(`owners/${encodeURIComponent(owner.id)}`, withTrailingSlash(baseUrl)).href

/**
 * The owner as a JSON-LD node. `@type` lists `foaf:Agent` explicitly next to
 * `foaf:Organization` so that DCAT-AP shape checks (`dct:publisher` must be a `foaf:Agent`)
 * pass without RDFS inference.
 */
export const toAgentNode = (owner: Owner, options: { readonly baseUrl: string }): AgentNode => ({
  "@id": ownerIri(owner, options.baseUrl),
  "@type": [Foaf.Agent, Foaf.Organization, schemaOrgIri(owner.type)],
  [Foaf.name]: owner.name,
  ...(owner.url === undefined ? {} : { [Foaf.homepage]: { "@id": owner.url } })
})

const withTrailingSlash = (url: string) => (url.endsWith("/") ? url : `${url}/`)
