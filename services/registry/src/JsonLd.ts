/**
 * The registry's records as JSON-LD (`format=jsonld`, `application/ld+json`).
 *
 * Every document is written in expanded form: property names, `@type`s and references are
 * absolute IRIs, so a consumer needs no context to read it (CURIEs from bundles were expanded at
 * import, see `Iris`). The document's `@context` still references the ontology context document
 * (`ONTOLOGY_CONTEXT_URL`; by default the registry's own, `contextDocument` below, served at
 * `/context.jsonld`), which names every term used here so that a JSON-LD processor can compact
 * the answer into short names. Every node has an `@id` and an `@type`; nested parts without an
 * identity of their own (legal details, contact, settings, device, geometry, unknown fields) are
 * JSON literals (`"@type": "@json"`). Lists are `hydra:Collection`s whose `hydra:view` links the
 * next page. Organizations named as owners are `foaf:Agent` nodes made by `@rec/owners`.
 */
import { type AgentNode, Foaf } from "@rec/owners"
import type * as Domain from "./Domain.js"
import { type Mint, Namespaces } from "./Iris.js"

const { celine, dcterms, foaf, geo, hydra, peco, saref, schema, xsd } = Namespaces

/** Every IRI the registry writes, by the term the context document gives it. */
export const Vocabulary = {
  // classes
  EnergyCommunity: `${celine}EnergyCommunity`,
  Membership: `${celine}Membership`,
  Participant: `${celine}Participant`,
  Area: `${celine}Area`,
  TopologyNode: `${celine}TopologyNode`,
  DeliveryPoint: `${celine}DeliveryPoint`,
  Site: `${celine}Site`,
  Asset: `${celine}Asset`,
  PhotovoltaicSystem: `${celine}PhotovoltaicSystem`,
  EnergyStorage: `${celine}EnergyStorage`,
  Meter: `${celine}Meter`,
  EvCharger: `${celine}EvCharger`,
  HeatPump: `${celine}HeatPump`,
  Load: `${celine}Load`,
  Device: `${saref}Device`,
  SarefMeter: `${saref}Meter`,
  Collection: `${hydra}Collection`,
  PartialCollectionView: `${hydra}PartialCollectionView`,
  // roles
  Producer: `${peco}Producer`,
  Consumer: `${peco}Consumer`,
  Prosumer: `${peco}Prosumer`,
  // properties
  identifier: `${dcterms}identifier`,
  description: `${dcterms}description`,
  name: Foaf.name,
  homepage: Foaf.homepage,
  logo: `${foaf}logo`,
  email: `${schema}email`,
  address: `${schema}address`,
  lat: `${geo}lat`,
  long: `${geo}long`,
  member: `${hydra}member`,
  totalItems: `${hydra}totalItems`,
  view: `${hydra}view`,
  next: `${hydra}next`,
  ownedBy: `${celine}ownedBy`,
  hasArea: `${celine}hasArea`,
  hasTopologyNode: `${celine}hasTopologyNode`,
  nodeType: `${celine}nodeType`,
  operator: `${celine}operator`,
  parentNode: `${celine}parentNode`,
  coversNode: `${celine}coversNode`,
  geometry: `${celine}geometry`,
  legal: `${celine}legal`,
  contact: `${celine}contact`,
  settings: `${celine}settings`,
  privacyPolicy: `${celine}privacyPolicy`,
  terms: `${celine}terms`,
  statute: `${celine}statute`,
  regulations: `${celine}regulations`,
  memberCount: `${celine}memberCount`,
  isMemberOf: `${celine}isMemberOf`,
  membershipParticipant: `${celine}membershipParticipant`,
  role: `${celine}role`,
  status: `${celine}status`,
  inArea: `${celine}inArea`,
  userId: `${celine}userId`,
  hasDeliveryPoint: `${celine}hasDeliveryPoint`,
  deliveryPointType: `${celine}deliveryPointType`,
  active: `${celine}active`,
  tariff: `${celine}tariff`,
  assetCount: `${celine}assetCount`,
  heldBy: `${celine}heldBy`,
  locatedAt: `${celine}locatedAt`,
  assetType: `${celine}assetType`,
  properties: `${celine}properties`,
  device: `${celine}device`,
  measures: `${celine}measures`,
  pairedWith: `${celine}pairedWith`,
  sensorId: `${celine}sensorId`,
  meterType: `${celine}meterType`,
  deliveryPoint: `${celine}deliveryPoint`,
  extra: `${celine}extra`
} as const

const V = Vocabulary

const roleIri: Record<Domain.Role, string> = { producer: V.Producer, consumer: V.Consumer, prosumer: V.Prosumer }

const assetClass: Record<Domain.AssetType, ReadonlyArray<string>> = {
  pv: [V.PhotovoltaicSystem],
  storage: [V.EnergyStorage],
  meter: [V.Meter, V.SarefMeter],
  ev_charger: [V.EvCharger],
  heat_pump: [V.HeatPump],
  load: [V.Load]
}

/** Terms whose values are references (`@id`), for the context document. */
const references = new Set<string>([
  "ownedBy", "hasArea", "hasTopologyNode", "parentNode", "coversNode", "isMemberOf", "membershipParticipant", "role",
  "inArea", "hasDeliveryPoint", "heldBy", "locatedAt", "measures", "pairedWith", "deliveryPoint", "homepage", "logo",
  "privacyPolicy", "terms", "statute", "regulations", "member", "view", "next"
])
const jsonLiterals = new Set<string>(["geometry", "legal", "contact", "settings", "properties", "device", "extra"])
const integers = new Set<string>(["memberCount", "assetCount", "totalItems"])

/**
 * The context document (`GET /context.jsonld`): the prefixes and a term for every IRI above, so
 * that `jsonld.compact(answer, contextDocument)` gives short names.
 */
export const contextDocument = {
  "@context": {
    "@version": 1.1,
    ...Namespaces,
    ...Object.fromEntries(
      Object.entries(V).map(([term, iri]) => [
        term,
        references.has(term)
          ? { "@id": iri, "@type": "@id" }
          : jsonLiterals.has(term)
          ? { "@id": iri, "@type": "@json" }
          : integers.has(term)
          ? { "@id": iri, "@type": `${xsd}integer` }
          : iri
      ])
    )
  }
} as const

export type Node = Record<string, unknown>

const ref = (iri: string) => ({ "@id": iri })
const json = (value: unknown) => ({ "@value": value, "@type": "@json" })
const integer = (value: number) => ({ "@value": value, "@type": `${xsd}integer` })
const withDefined = (node: Node): Node => Object.fromEntries(Object.entries(node).filter(([, v]) => v !== undefined && v !== null))
const nonEmpty = (value: Readonly<Record<string, unknown>> | null | undefined) =>
  value === null || value === undefined || Object.keys(value).length === 0 ? undefined : json(value)

export interface Renderer {
  readonly iris: Mint
  /** The `foaf:Agent` node of an owner reference (`@rec/owners` for registered owners). */
  readonly agent: (owner: Domain.OwnerRef) => AgentNode | Node
}

export const community = (r: Renderer, c: Domain.Community): Node => {
  const areas = Object.entries(c.areas).map(([key, area]) => {
    const { geometry, location, name, topology, ...rest } = area as Record<string, unknown> & {
      location?: { lat?: unknown; lon?: unknown }
    }
    return withDefined({
      "@id": r.iris.area(c.key, key),
      "@type": [V.Area],
      [V.identifier]: key,
      [V.name]: name,
      [V.lat]: location?.lat,
      [V.long]: location?.lon,
      [V.coversNode]: Array.isArray(topology) ? topology.map((id) => ref(r.iris.topologyNode(c.key, String(id)))) : undefined,
      [V.geometry]: geometry === undefined ? undefined : json(geometry),
      [V.extra]: nonEmpty(rest)
    })
  })
  const nodes = c.topology.map((node) => {
    const { area, id, name, operator, parent, type, ...rest } = node
    return withDefined({
      "@id": r.iris.topologyNode(c.key, String(id)),
      "@type": [V.TopologyNode],
      [V.identifier]: id,
      [V.nodeType]: type,
      [V.name]: name,
      [V.operator]: operator,
      [V.parentNode]: typeof parent === "string" ? ref(r.iris.topologyNode(c.key, parent)) : undefined,
      [V.geometry]: area === undefined ? undefined : json(area),
      [V.extra]: nonEmpty(rest)
    })
  })
  const links = c.links ?? {}
  const linked = (key: string) => (typeof links[key] === "string" ? ref(links[key] as string) : undefined)
  return withDefined({
    "@id": c.iri,
    "@type": c.type === null ? [V.EnergyCommunity] : [V.EnergyCommunity, c.type],
    [V.identifier]: c.key,
    [V.name]: c.name,
    [V.description]: c.description,
    [V.ownedBy]: c.owner === null ? undefined : r.agent(c.owner),
    [V.hasArea]: areas,
    [V.hasTopologyNode]: nodes.length === 0 ? undefined : nodes,
    [V.homepage]: linked("website"),
    [V.logo]: linked("logo"),
    [V.privacyPolicy]: linked("privacy_policy"),
    [V.terms]: linked("terms"),
    [V.statute]: linked("statute"),
    [V.regulations]: linked("regulations"),
    [V.legal]: nonEmpty(c.legal),
    [V.contact]: nonEmpty(c.contact),
    [V.settings]: nonEmpty(c.settings),
    [V.memberCount]: integer(c.member_count)
  })
}

export const member = (r: Renderer, m: Domain.Member): Node =>
  withDefined({
    "@id": m.iri,
    "@type": [V.Membership],
    [V.identifier]: m.key,
    [V.isMemberOf]: ref(r.iris.community(m.community)),
    [V.membershipParticipant]: {
      "@id": r.iris.participant(m.community, m.key),
      "@type": m.type === null ? [V.Participant] : [V.Participant, m.type],
      [V.name]: m.name,
      [V.userId]: m.user_id
    },
    [V.role]: ref(roleIri[m.role]),
    [V.status]: m.status,
    [V.inArea]: ref(r.iris.area(m.community, m.area)),
    [V.hasDeliveryPoint]: m.delivery_points.length === 0 ? undefined : m.delivery_points.map((point) => {
      const { active, address, description, id, tariff, type, ...rest } = point
      return withDefined({
        "@id": r.iris.deliveryPoint(m.community, id),
        "@type": [V.DeliveryPoint],
        [V.identifier]: id,
        [V.deliveryPointType]: type,
        [V.description]: description,
        [V.address]: address,
        [V.tariff]: tariff,
        [V.active]: active,
        [V.extra]: nonEmpty(rest)
      })
    }),
    [V.assetCount]: integer(m.asset_count),
    [V.extra]: nonEmpty(m.extra)
  })

export const asset = (r: Renderer, a: Domain.Asset): Node => {
  const { pod, sensor_id, meter_type, ...properties } = a.properties
  const assetKey = (id: string) => id.slice(id.indexOf(".") + 1)
  return withDefined({
    "@id": a.iri,
    "@type": [V.Asset, ...assetClass[a.asset_type], V.Device],
    [V.identifier]: a.key,
    [V.name]: a.name,
    [V.assetType]: a.asset_type,
    [V.heldBy]: ref(r.iris.member(a.community, a.member.slice(a.member.indexOf(".") + 1))),
    [V.locatedAt]: a.site === null ? undefined : ref(r.iris.site(a.community, assetKey(a.site))),
    [V.ownedBy]: a.owner === null ? undefined : r.agent(a.owner),
    [V.sensorId]: sensor_id,
    [V.meterType]: meter_type,
    [V.deliveryPoint]: typeof pod === "string" ? ref(r.iris.deliveryPoint(a.community, pod)) : undefined,
    [V.properties]: nonEmpty(properties),
    [V.device]: nonEmpty(a.device),
    [V.measures]: a.relationships === null || a.relationships.measures.length === 0
      ? undefined
      : a.relationships.measures.map((id) => ref(r.iris.asset(a.community, assetKey(id)))),
    [V.pairedWith]: a.relationships?.paired_with == null
      ? undefined
      : ref(r.iris.asset(a.community, assetKey(a.relationships.paired_with)))
  })
}

export const site = (r: Renderer, s: Domain.Site): Node =>
  withDefined({
    "@id": s.iri,
    "@type": [V.Site],
    [V.identifier]: s.key,
    [V.name]: s.name,
    [V.inArea]: ref(r.iris.area(s.community, s.area)),
    [V.heldBy]: s.member === null ? undefined : ref(r.iris.member(s.community, s.member.slice(s.member.indexOf(".") + 1))),
    [V.address]: s.address,
    [V.lat]: s.location?.lat,
    [V.long]: s.location?.lon,
    [V.deliveryPoint]: s.delivery_point === null ? undefined : ref(r.iris.deliveryPoint(s.community, s.delivery_point)),
    [V.extra]: nonEmpty(s.extra)
  })

/** A page of a list: a `hydra:Collection` named by the request's URL. */
export const collection = (items: ReadonlyArray<Node>, urls: { readonly self: string; readonly next: string | null }): Node =>
  withDefined({
    "@id": urls.self,
    "@type": [V.Collection],
    [V.member]: items,
    [V.view]: {
      "@id": urls.self,
      "@type": [V.PartialCollectionView],
      ...(urls.next === null ? {} : { [V.next]: ref(urls.next) })
    }
  })

/** The answer: the node with the `@context` reference first. */
export const document = (contextUrl: string, node: Node): Node => ({ "@context": contextUrl, ...node })

/** A bare `foaf:Agent` for an owner the owner registry does not know (named by its IRI). */
export const bareAgent = (owner: Domain.OwnerRef): Node => ({ "@id": owner.iri, "@type": [Foaf.Agent] })
