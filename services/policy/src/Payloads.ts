/**
 * The decision endpoints' payloads decoded by hand, for the fast routes (`Fast`): each function
 * accepts the plain JSON values that decode with the endpoint's schema in `Domain` and returns
 * exactly what the schema returns (defaults filled in, unknown keys dropped, records and arrays
 * copied), or `undefined` for anything else, which then goes to the schema (and the contract's
 * handler). They exist because a schema decode costs about 5 µs per request, as much as the
 * rest of a cached decision; a hand-written check of the same shape costs 0.1 µs.
 *
 * `test/Payloads.test.ts` checks every function against its schema on generated valid inputs and
 * on mutations of them (wrong types, missing and extra fields, bounds, nulls).
 */
import type * as Domain from "./Domain.js"

type Json = Readonly<Record<string, unknown>>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const isString = (u: unknown, min: number, max: number): u is string =>
  typeof u === "string" && u.length >= min && u.length <= max

/** `Domain`'s `Id`: 1 to 512 characters. */
const isId = (u: unknown): u is string => isString(u, 1, 512)

const oneOf = <const L extends string>(...literals: ReadonlyArray<L>) => {
  const set: ReadonlySet<string> = new Set(literals)
  return (u: unknown): u is L => typeof u === "string" && set.has(u)
}

/**
 * A JSON object record (`Domain.JsonObject`), copied; `{}` when absent. A `__proto__` key is
 * left to the schema (copying it by assignment would set the prototype).
 */
const record = (u: unknown): Record<string, unknown> | undefined => {
  if (u === undefined) return {}
  if (!isObject(u)) return undefined
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(u)) {
    if (key === "__proto__") return undefined
    out[key] = u[key]
  }
  return out
}

const strings = (u: unknown): Array<string> | undefined =>
  Array.isArray(u) && u.every((s) => typeof s === "string") ? u.slice() : undefined

export const authorize = (u: unknown): typeof Domain.AuthorizeRequest.Type | undefined => {
  if (!isObject(u) || !isObject(u.resource) || !isObject(u.action)) return undefined
  const { action, resource } = u
  if (typeof resource.type !== "string" || !isId(resource.id) || !isString(action.name, 1, 128)) return undefined
  const attributes = record(resource.attributes)
  const actionContext = record(action.context)
  const context = record(u.context)
  if (attributes === undefined || actionContext === undefined || context === undefined) return undefined
  return {
    resource: { type: resource.type, id: resource.id, attributes },
    action: { name: action.name, context: actionContext },
    context
  }
}

const isAccessLevel = oneOf("open", "internal", "restricted")
const isDatasetAction = oneOf("read", "write", "admin")

export const datasetAccess = (u: unknown): typeof Domain.DatasetAccessRequest.Type | undefined => {
  if (!isObject(u) || !isId(u.dataset_id) || !isAccessLevel(u.access_level)) return undefined
  const action = u.action === undefined ? "read" : u.action
  if (!isDatasetAction(action)) return undefined
  return { dataset_id: u.dataset_id, access_level: u.access_level, action }
}

export const datasetFilters = (u: unknown): typeof Domain.DatasetFiltersRequest.Type | undefined =>
  isObject(u) && isId(u.dataset_id) && isAccessLevel(u.access_level)
    ? { dataset_id: u.dataset_id, access_level: u.access_level }
    : undefined

const isPipelineState = oneOf("pending", "started", "running", "completed", "failed", "cancelled")

export const pipelineTransition = (u: unknown): typeof Domain.PipelineTransitionRequest.Type | undefined =>
  isObject(u) && isId(u.pipeline_id) && isPipelineState(u.from_state) && isPipelineState(u.to_state)
    ? { pipeline_id: u.pipeline_id, from_state: u.from_state, to_state: u.to_state }
    : undefined

const isDtAction = oneOf("read", "write", "simulate", "admin")

export const dtAccess = (u: unknown): typeof Domain.DtAccessRequest.Type | undefined => {
  if (!isObject(u) || !isId(u.dt_id)) return undefined
  const action = u.action === undefined ? "read" : u.action
  return isDtAction(action) ? { dt_id: u.dt_id, action } : undefined
}

export const dtEvent = (u: unknown): typeof Domain.DtEventRequest.Type | undefined => {
  if (!isObject(u) || !isId(u.dt_id) || !isString(u.event_type, 1, 256)) return undefined
  const state = u.simulation_state === undefined ? null : u.simulation_state
  if (state !== null && !isString(state, 0, 256)) return undefined
  return { dt_id: u.dt_id, event_type: u.event_type, simulation_state: state }
}

const isUserdataType = oneOf("dashboard", "profile", "settings")
const isUserdataAction = oneOf("read", "write", "delete", "share")
const isVisibility = oneOf("private", "shared", "public")

export const userdataAccess = (u: unknown): typeof Domain.UserdataAccessRequest.Type | undefined => {
  if (!isObject(u) || !isUserdataType(u.resource_type) || !isId(u.resource_id) || !isId(u.owner_id)) return undefined
  const action = u.action === undefined ? "read" : u.action
  if (!isUserdataAction(action)) return undefined
  const out: {
    -readonly [K in keyof typeof Domain.UserdataAccessRequest.Type]: (typeof Domain.UserdataAccessRequest.Type)[K]
  } = { resource_type: u.resource_type, resource_id: u.resource_id, owner_id: u.owner_id, action }
  if (u.shared_with !== undefined) {
    const shared = strings(u.shared_with)
    if (shared === undefined) return undefined
    out.shared_with = shared
  }
  if (u.shared_with_groups !== undefined) {
    const groups = strings(u.shared_with_groups)
    if (groups === undefined) return undefined
    out.shared_with_groups = groups
  }
  if (u.visibility !== undefined) {
    if (!isVisibility(u.visibility)) return undefined
    out.visibility = u.visibility
  }
  return out
}
