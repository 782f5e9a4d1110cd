/**
 * The rules of a bundle that its JSON Schema cannot state, checked on the parsed YAML as it is
 * (whatever the schema says about it, so that one run reports every problem):
 *
 * - names of map keys (members, areas, sites, assets, prefixes): `propertyNames` in the JSON
 *   Schema, checked here because a refused key would hide the problems of its value;
 * - references: a member's and a site's `area`, a site's `member` and `delivery_point`, an asset's
 *   `site` (of the same member), a meter's `pod` (a delivery point of its member), `relationships`
 *   (assets of the community), topology `parent`s (no cycles) and an area's `topology` nodes;
 * - keys unique across the bundle: member `user_id`s, asset keys (one namespace for every member
 *   and type: they become the asset's id), delivery point ids, meter `sensor_id`s, topology ids;
 * - IRIs: `type`s must expand (declared or well-known prefix, or an IRI), see `Iris`;
 * - owners: `owner` names an owner of the owner registry (id, alias, DID or URL) or is an IRI.
 *
 * - closed objects: `context` and `assets` allow only their properties (`additionalProperties`).
 *
 * Unknown properties elsewhere are kept (v0.4 is open), with a warning when the name is close to
 * a known one.
 */
import * as Domain from "./Domain.js"
import { assetProperties, ClosedObjects, DELIVERY_POINT_PATTERN, KEY_PATTERN, KeyedMaps, Properties } from "./BundleSchema.js"
import { expand } from "./Iris.js"
import type { JsonPath } from "./SchemaIssues.js"

export interface Finding {
  readonly path: JsonPath
  readonly code: Domain.ProblemCode
  readonly keyword?: string | undefined
  readonly message: string
}

export interface CheckOptions {
  /** Whether the owner registry knows this id, alias, DID or URL. */
  readonly knownOwner: (reference: string) => boolean
}

type Obj = Readonly<Record<string, unknown>>

const isObj = (value: unknown): value is Obj => typeof value === "object" && value !== null && !Array.isArray(value)
const obj = (value: unknown): Obj => (isObj(value) ? value : {})
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)
const keyPattern = new RegExp(KEY_PATTERN)
const pointPattern = new RegExp(DELIVERY_POINT_PATTERN)
/** A reference worth resolving: a malformed one is a schema problem already. */
const refKey = (value: unknown): string | undefined => (typeof value === "string" && keyPattern.test(value) ? value : undefined)
const pointId = (value: unknown): string | undefined => (typeof value === "string" && pointPattern.test(value) ? value : undefined)
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const entries = (value: unknown): ReadonlyArray<readonly [string, unknown]> => (isObj(value) ? Object.entries(value) : [])

const q = (value: string) => JSON.stringify(value)

/** Owner references that need no registry: they are IRIs of the agent itself. */
const ownerIriPattern = /^(https?:\/\/[^\s]+|did:[a-z0-9]+:[^\s]+|urn:[^\s]+)$/i

export const checkBundle = (bundle: unknown, options: CheckOptions): { problems: Array<Finding>; warnings: Array<Finding> } => {
  const problems: Array<Finding> = []
  const warnings: Array<Finding> = []
  const problem = (path: JsonPath, code: Domain.ProblemCode, message: string, keyword?: string) =>
    problems.push({ path, code, message, ...(keyword === undefined ? {} : { keyword }) })

  const root = obj(bundle)
  const community = obj(root["community"])
  const context = obj(root["context"])
  const prefixes = Object.fromEntries(entries(context["prefixes"]).flatMap(([k, v]) => typeof v === "string" ? [[k, v]] : []))
  const base = str(context["base_iri"])

  // Map keys (those below every member are checked with the members, in one pass) ---------------
  const unknownProperty = (at: JsonPath, key: string, properties: ReadonlyArray<string>) => {
    const suggestion = closest(key, properties)
    problem(
      [...at, key],
      "schema",
      `unknown property ${q(key)} (${suggestion === undefined ? `allowed: ${properties.join(", ")}` : `did you mean ${q(suggestion)}?`})`,
      "additionalProperties"
    )
  }
  const badKey = (at: JsonPath, key: string, pattern: string) =>
    problem([...at, key], "schema", `the key ${q(key)} does not match ${pattern}`, "propertyNames")
  for (const { path, pattern } of KeyedMaps) {
    if (path.includes("*")) continue
    const regex = new RegExp(pattern)
    for (const [at, map] of mapsAt(root, path)) {
      for (const [key] of entries(map)) {
        if (!regex.test(key)) badKey(at, key, pattern)
      }
    }
  }

  for (const { path, properties } of ClosedObjects) {
    if (path.includes("*")) continue
    for (const [at, value] of mapsAt(root, path)) {
      for (const [key] of entries(value)) {
        if (!properties.includes(key)) unknownProperty(at, key, properties)
      }
    }
  }

  // Areas and topology --------------------------------------------------------------------------
  const areas = new Set(entries(community["areas"]).map(([key]) => key))
  const areaList = [...areas].sort().join(", ")
  const nodes = new Map<string, { readonly index: number; readonly parent: string | undefined }>()
  list(community["topology"]).forEach((node, index) => {
    const id = refKey(obj(node)["id"])
    if (id === undefined) return
    const first = nodes.get(id)
    if (first !== undefined) {
      problem(["community", "topology", index, "id"], "duplicate-key", `topology node ${q(id)} is already community.topology[${first.index}]`)
      return
    }
    nodes.set(id, { index, parent: refKey(obj(node)["parent"]) })
  })
  for (const [id, { index, parent }] of nodes) {
    if (parent === undefined) continue
    if (!nodes.has(parent)) {
      problem(["community", "topology", index, "parent"], "dangling-reference", `parent ${q(parent)} is not a topology node of the community`)
      continue
    }
    // Walking up from the node must end at a root.
    const visited = new Set([id])
    let current: string | undefined = parent
    while (current !== undefined && nodes.has(current)) {
      if (visited.has(current)) {
        problem(["community", "topology", index, "parent"], "dangling-reference", `topology node ${q(id)} is its own ancestor (parent cycle)`)
        break
      }
      visited.add(current)
      current = nodes.get(current)!.parent
    }
  }
  for (const [area, value] of entries(community["areas"])) {
    list(obj(value)["topology"]).forEach((value, i) => {
      const node = refKey(value)
      if (node !== undefined && !nodes.has(node)) {
        problem(["community", "areas", area, "topology", i], "dangling-reference", `${q(node)} is not a topology node of the community`)
      }
    })
  }

  // IRIs and owners ---------------------------------------------------------------------------
  const checkIri = (path: JsonPath, value: unknown) => {
    if (typeof value !== "string" || value === "") return
    const result = expand(value, prefixes, base)
    if (result._tag === "UnknownPrefix") {
      problem(path, "unknown-prefix", `${q(value)} uses the prefix ${q(result.prefix)}, which context.prefixes does not declare`)
    } else if (result._tag === "NotAnIri") {
      problem(path, "invalid-value", `${q(value)} ${result.reason}`)
    }
  }
  const checkOwner = (path: JsonPath, value: unknown) => {
    if (typeof value !== "string" || value === "") return
    if (options.knownOwner(value) || ownerIriPattern.test(value)) return
    problem(path, "unknown-owner", `owner ${q(value)} is not in the owner registry (OWNERS_FILE) and is not an IRI (https://..., did:..., urn:...)`)
  }
  checkIri(["community", "type"], community["type"])
  checkOwner(["community", "owner"], community["owner"])

  // Members ------------------------------------------------------------------------------------
  const members = entries(root["members"])
  const userIds = new Map<string, string>()
  const deliveryPoints = new Map<string, string>()
  const memberPoints = new Map<string, Set<string>>()
  const assetKeys = new Map<string, { readonly member: string; readonly type: string }>()
  const sensors = new Map<string, string>()

  for (const [key, value] of members) {
    const member = obj(value)
    const at: JsonPath = ["members", key]
    const userId = str(member["user_id"])
    if (userId !== undefined) {
      const first = userIds.get(userId)
      if (first !== undefined) problem([...at, "user_id"], "duplicate-key", `user_id ${q(userId)} is already the user of member ${q(first)}`)
      else userIds.set(userId, key)
    }
    const area = refKey(member["area"])
    if (area !== undefined && !areas.has(area)) {
      problem([...at, "area"], "dangling-reference", `area ${q(area)} is not an area of the community (areas: ${areaList || "none"})`)
    }
    checkIri([...at, "type"], member["type"])
    const points = new Set<string>()
    memberPoints.set(key, points)
    list(member["delivery_points"]).forEach((point, i) => {
      const id = pointId(obj(point)["id"])
      if (id === undefined) return
      const holder = deliveryPoints.get(id)
      if (holder !== undefined) {
        problem([...at, "delivery_points", i, "id"], "duplicate-key", `delivery point ${q(id)} is already a delivery point of member ${q(holder)}`)
      } else {
        deliveryPoints.set(id, key)
      }
      points.add(id)
    })
    for (const [type, map] of entries(member["assets"])) {
      const known = (Domain.AssetTypes as ReadonlyArray<string>).includes(type)
      if (!known) unknownProperty([...at, "assets"], type, Properties.assets)
      for (const [assetKey] of entries(map)) {
        if (known && !keyPattern.test(assetKey)) badKey([...at, "assets", type], assetKey, KEY_PATTERN)
        const first = assetKeys.get(assetKey)
        if (first !== undefined) {
          problem(
            [...at, "assets", type, assetKey],
            "duplicate-key",
            `asset key ${q(assetKey)} is already used by members.${first.member}.assets.${first.type} (asset keys are unique in a community)`
          )
        } else {
          assetKeys.set(assetKey, { member: key, type })
        }
      }
    }
  }

  // Sites ---------------------------------------------------------------------------------------
  const memberKeys = new Set(members.map(([key]) => key))
  const sites = new Map<string, string | undefined>()
  for (const [siteKey, value] of entries(root["sites"])) {
    const site = obj(value)
    const at: JsonPath = ["sites", siteKey]
    const member = refKey(site["member"])
    sites.set(siteKey, member)
    if (member !== undefined && !memberKeys.has(member)) {
      problem([...at, "member"], "dangling-reference", `member ${q(member)} is not a member of the bundle`)
    }
    const area = refKey(site["area"])
    if (area !== undefined && !areas.has(area)) {
      problem([...at, "area"], "dangling-reference", `area ${q(area)} is not an area of the community (areas: ${areaList || "none"})`)
    }
    const point = pointId(site["delivery_point"])
    if (point !== undefined) {
      if (member === undefined) {
        problem([...at, "delivery_point"], "dangling-reference", `delivery point ${q(point)} needs the site's member, whose delivery point it is`)
      } else if (memberKeys.has(member) && !memberPoints.get(member)?.has(point)) {
        problem([...at, "delivery_point"], "dangling-reference", `${q(point)} is not a delivery point of member ${q(member)}`)
      }
    }
  }

  // Assets --------------------------------------------------------------------------------------
  for (const [memberKey, value] of members) {
    for (const [type, map] of entries(obj(value)["assets"])) {
      for (const [assetKey, assetValue] of entries(map)) {
        const asset = obj(assetValue)
        const at: JsonPath = ["members", memberKey, "assets", type, assetKey]
        const site = refKey(asset["site"])
        if (site !== undefined) {
          if (!sites.has(site)) {
            problem([...at, "site"], "dangling-reference", `site ${q(site)} is not a site of the bundle`)
          } else {
            const holder = sites.get(site)
            if (holder !== undefined && holder !== memberKey) {
              problem([...at, "site"], "dangling-reference", `site ${q(site)} belongs to member ${q(holder)}, not to ${q(memberKey)}`)
            }
          }
        }
        checkOwner([...at, "owner"], asset["owner"])
        const relationships = obj(asset["relationships"])
        list(relationships["measures"]).forEach((value, i) => {
          const target = refKey(value)
          if (target === undefined) return
          if (!assetKeys.has(target)) {
            problem([...at, "relationships", "measures", i], "dangling-reference", `${q(target)} is not an asset of the community`)
          } else if (target === assetKey) {
            problem([...at, "relationships", "measures", i], "dangling-reference", "an asset does not measure itself")
          }
        })
        const paired = refKey(relationships["paired_with"])
        if (paired !== undefined) {
          if (!assetKeys.has(paired)) {
            problem([...at, "relationships", "paired_with"], "dangling-reference", `${q(paired)} is not an asset of the community`)
          } else if (paired === assetKey) {
            problem([...at, "relationships", "paired_with"], "dangling-reference", "an asset is not paired with itself")
          }
        }
        if (type === "meter") {
          const sensor = str(asset["sensor_id"])
          if (sensor !== undefined && sensor !== "") {
            const holder = sensors.get(sensor)
            if (holder !== undefined) {
              problem([...at, "sensor_id"], "duplicate-key", `sensor_id ${q(sensor)} is already the sensor of meter ${q(holder)}`)
            } else {
              sensors.set(sensor, assetKey)
            }
          }
          const pod = pointId(asset["pod"])
          if (pod !== undefined && !memberPoints.get(memberKey)?.has(pod)) {
            problem([...at, "pod"], "dangling-reference", `${q(pod)} is not a delivery point of member ${q(memberKey)}`)
          }
        }
        if ((Domain.AssetTypes as ReadonlyArray<string>).includes(type)) {
          unknownProperties(at, asset, assetProperties(type as Domain.AssetType), warnings)
        }
      }
    }
  }

  // Unknown properties close to known ones -----------------------------------------------------
  unknownProperties([], root, Properties.bundle, warnings)
  unknownProperties(["community"], community, Properties.community, warnings)
  for (const [key, value] of members) unknownProperties(["members", key], obj(value), Properties.member, warnings)
  for (const [key, value] of entries(root["sites"])) unknownProperties(["sites", key], obj(value), Properties.site, warnings)

  return { problems, warnings }
}

/** The maps at a path with `*` for every key of a map on the way. */
const mapsAt = (root: Obj, path: ReadonlyArray<string>): Array<readonly [JsonPath, unknown]> => {
  let current: Array<readonly [JsonPath, unknown]> = [[[], root]]
  for (const segment of path) {
    current = current.flatMap(([at, value]) =>
      segment === "*"
        ? entries(value).map(([key, inner]) => [[...at, key], inner] as const)
        : isObj(value) && segment in value
        ? [[[...at, segment], value[segment]] as const]
        : []
    )
  }
  return current.filter(([, value]) => isObj(value))
}

const unknownProperties = (at: JsonPath, value: Obj, known: ReadonlyArray<string>, warnings: Array<Finding>) => {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue
    const suggestion = closest(key, known)
    if (suggestion !== undefined) {
      warnings.push({
        path: [...at, key],
        code: "unknown-property",
        message: `unknown property ${q(key)} kept as extra data (did you mean ${q(suggestion)}?)`
      })
    }
  }
}

/** A known name within one edit per three characters (at most two) of `name`. */
const closest = (name: string, known: ReadonlyArray<string>): string | undefined => {
  const allowed = Math.min(2, Math.max(1, Math.floor(name.length / 3)))
  let best: { readonly name: string; readonly distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate)
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { name: candidate, distance }
  }
  return best?.name
}

const editDistance = (a: string, b: string): number => {
  if (Math.abs(a.length - b.length) > 2) return 3
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}
