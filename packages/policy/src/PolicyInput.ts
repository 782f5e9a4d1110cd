/**
 * The input document every policy reads (see the METADATA of `policies/common/subject.rego`):
 *
 * ```
 * { subject: { id, type: "user" | "service", groups, scopes, organizations, claims } | null,
 *   resource: { type, id, attributes },
 *   action: { name, context },
 *   environment: { request_id, timestamp, ... } }
 * ```
 *
 * `subjectOf` builds the subject from an `@rec/auth` `Subject`, so every service hands policies
 * the same shape; `null` is the anonymous subject.
 */
import type { Subject } from "@rec/auth/Subject"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const Strings = Schema.Array(Schema.String)
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const PolicyOrganization = Schema.Struct({
  alias: Schema.String,
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  types: Strings,
  attributes: Schema.Record({ key: Schema.String, value: Strings }),
  groups: Strings,
  roles: Strings
})
export type PolicyOrganization = typeof PolicyOrganization.Type

export const PolicySubject = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("user", "service"),
  groups: Strings,
  scopes: Strings,
  organizations: Schema.Array(PolicyOrganization),
  /** Every verified claim of the token (never the token itself). */
  claims: JsonObject
})
export type PolicySubject = typeof PolicySubject.Type

export const PolicyResource = Schema.Struct({ type: Schema.String, id: Schema.String, attributes: JsonObject })
export type PolicyResource = typeof PolicyResource.Type

export const PolicyAction = Schema.Struct({ name: Schema.String, context: JsonObject })
export type PolicyAction = typeof PolicyAction.Type

export const PolicyInput = Schema.Struct({
  subject: Schema.NullOr(PolicySubject),
  resource: PolicyResource,
  action: PolicyAction,
  environment: Schema.optional(JsonObject)
}).pipe(Schema.annotations({ identifier: "PolicyInput" }))
export type PolicyInput = typeof PolicyInput.Type

/**
 * The policy subject of an authenticated caller: plain JSON, as the Rego engine expects.
 * Memoised per `Subject` object (a verified token's subject is reused while the token is
 * cached), which also lets the decision cache digest it once.
 */
export const subjectOf = (subject: Subject): PolicySubject => {
  let policySubject = memo.get(subject)
  if (policySubject === undefined) {
    policySubject = toPolicySubject(subject)
    memo.set(subject, policySubject)
  }
  return policySubject
}

const memo = new WeakMap<Subject, PolicySubject>()

const toPolicySubject = (subject: Subject): PolicySubject => ({
  id: subject.id,
  type: subject.type,
  groups: subject.groups,
  scopes: subject.scopes,
  organizations: subject.organizations.map((o) => {
    const out: { -readonly [K in keyof PolicyOrganization]: PolicyOrganization[K] } = {
      alias: o.alias,
      types: o.types,
      attributes: o.attributes,
      groups: o.groups,
      roles: o.roles
    }
    if (o.id !== undefined) out.id = o.id
    if (o.name !== undefined) out.name = o.name
    return out
  }),
  claims: subject.claims
})

/** `subjectOf` for an optional caller: `null` (anonymous) when there is none. */
export const maybeSubjectOf = (subject: Option.Option<Subject>): PolicySubject | null =>
  Option.match(subject, { onNone: () => null, onSome: subjectOf })

/** An input with the usual environment (`request_id`, `timestamp` in epoch seconds). */
export const make = (options: {
  readonly subject: PolicySubject | null
  readonly resource: { readonly type: string; readonly id: string; readonly attributes?: Record<string, unknown> }
  readonly action: { readonly name: string; readonly context?: Record<string, unknown> }
  readonly requestId?: string | undefined
  readonly environment?: Record<string, unknown> | undefined
}): PolicyInput => ({
  subject: options.subject,
  resource: { type: options.resource.type, id: options.resource.id, attributes: options.resource.attributes ?? {} },
  action: { name: options.action.name, context: options.action.context ?? {} },
  environment: {
    ...options.environment,
    ...(options.requestId === undefined ? {} : { request_id: options.requestId }),
    timestamp: Date.now() / 1000
  }
})
