/**
 * Checking a bundle: YAML under the parsing limits (`BundleYaml`), values PostgreSQL can store,
 * the schema (`BundleSchema`, every violation with its path and JSON Schema keyword), then the
 * rules across the bundle (`BundleCheck`). Every problem of every step is reported at once; a
 * bundle without problems comes with the rows to import (`Plan`).
 *
 * A parsing limit (depth, aliases, expansion, not UTF-8) is not a problem of the bundle but a
 * refusal of the request (`BundleRefused`, 400): nothing after it runs.
 */
import { Owners } from "@rec/owners"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Bundle, BundleShell, Member, Site } from "./BundleSchema.js"
import { checkBundle } from "./BundleCheck.js"
import { decodeText, loadYaml } from "./BundleYaml.js"
import * as Config from "./Config.js"
import type * as Domain from "./Domain.js"
import * as Plan from "./Plan.js"
import { type Violation, violations } from "./SchemaIssues.js"

/** A parsing limit was reached; nothing of the bundle was checked. */
export class BundleRefused extends Schema.TaggedError<BundleRefused>()("BundleRefused", {
  limit: Schema.String,
  detail: Schema.String
}) {}

export interface Checked {
  /** The bundle's community key, when it has a readable one. */
  readonly community: string | null
  readonly problems: ReadonlyArray<Domain.Problem>
  readonly warnings: ReadonlyArray<Domain.Problem>
  /** The rows to store: only for a bundle without problems. */
  readonly plan: Plan.Plan | undefined
}

/** The most problems listed; a bundle with more says how many were left out. */
export const maxProblems = 1000

const options = { errors: "all", onExcessProperty: "preserve" } as const
/**
 * Violations of one schema: `Schema.is` first (about twice as fast as decoding, and it builds
 * no copy), decoding (for the issues) only what fails.
 */
const checker = <A, I>(schema: Schema.Schema<A, I>) => {
  const is = Schema.is(schema)
  const decode = Schema.decodeUnknownEither(schema, options)
  return (value: unknown): ReadonlyArray<Violation> => {
    if (is(value)) return []
    const decoded = decode(value)
    return Either.isLeft(decoded) ? violations(decoded.left.issue) : []
  }
}
const shellViolations = checker(BundleShell)
const memberViolations = checker(Member)
const siteViolations = checker(Site)

/**
 * Schema violations of a bundle: the bundle around its members and sites, then each member and
 * each site on its own (the decoded copies are dropped at once; the value itself is what gets
 * planned, the schema having no transformations).
 */
const schemaViolations = (value: unknown): Array<Violation> => {
  const found: Array<Violation> = [...shellViolations(value)]
  const part = (section: "members" | "sites", check: (input: unknown) => ReadonlyArray<Violation>) => {
    const map = (value as Record<string, unknown> | null | undefined)?.[section]
    if (typeof map !== "object" || map === null || Array.isArray(map)) return
    for (const key of Object.keys(map)) {
      for (const v of check((map as Record<string, unknown>)[key])) found.push({ ...v, path: [section, key, ...v.path] })
    }
  }
  part("members", memberViolations)
  part("sites", siteViolations)
  return found
}

const compareSegments = (a: ReadonlyArray<string | number>, b: ReadonlyArray<string | number>): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!
    const y = b[i]!
    if (x === y) continue
    if (typeof x === "number" && typeof y === "number") return x - y
    return String(x) < String(y) ? -1 : 1
  }
  return a.length - b.length
}

/** Problems sorted by where they are (then code), at most `maxProblems`. */
export const sortProblems = (problems: ReadonlyArray<Domain.Problem>): Array<Domain.Problem> => {
  const sorted = [...problems].sort((a, b) => compareSegments(a.path, b.path) || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
  if (sorted.length <= maxProblems) return sorted
  const left = sorted.length - maxProblems + 1
  return [
    ...sorted.slice(0, maxProblems - 1),
    { path: [], code: "schema", message: `${left} more problems are not listed; fix these and validate again` }
  ]
}

const communityKeyOf = (value: unknown): string | null => {
  const community = (value as { community?: { id?: unknown } } | null)?.community
  return typeof community?.id === "string" ? community.id : null
}

/** Checks bundles against the schema and the owner registry; stateless. */
export const make = (settings: { readonly limits: Config.Limits; readonly knownOwner: (reference: string) => boolean }) => {
  const checkText = (text: string): Either.Either<Checked, BundleRefused> => {
    const loaded = loadYaml(text, settings.limits)
    if (loaded._tag === "Limit") return Either.left(new BundleRefused({ limit: loaded.limit, detail: loaded.detail }))
    if (loaded._tag === "Syntax") {
      const problem: Domain.Problem = {
        path: [],
        code: "yaml",
        message: loaded.message,
        ...(loaded.line === undefined ? {} : { line: loaded.line }),
        ...(loaded.column === undefined ? {} : { column: loaded.column })
      }
      return Either.right({ community: null, problems: [problem], warnings: [], plan: undefined })
    }
    const value = loaded.value
    const problems: Array<Domain.Problem> = loaded.problems.map((p) => ({ path: p.path, code: "invalid-value", message: p.message }))
    // A value already refused (`.nan`) is not also reported against its schema rule.
    const refusedAt = new Set(problems.map((p) => JSON.stringify(p.path)))
    for (const v of schemaViolations(value)) {
      if (refusedAt.has(JSON.stringify(v.path))) continue
      problems.push({ path: v.path, code: "schema", keyword: v.keyword, message: v.message })
    }
    const checked = checkBundle(value, { knownOwner: settings.knownOwner })
    problems.push(...checked.problems)
    const plan = problems.length === 0 ? Plan.fromBundle(value as Bundle) : undefined
    return Either.right({
      community: communityKeyOf(value),
      problems: sortProblems(problems),
      warnings: sortProblems(checked.warnings),
      plan
    })
  }
  const checkBytes = (bytes: Uint8Array): Either.Either<Checked, BundleRefused> => {
    const text = decodeText(bytes)
    return typeof text === "string" ? checkText(text) : Either.left(new BundleRefused({ limit: text.limit, detail: text.detail }))
  }
  return { checkText, checkBytes }
}

export class Bundles extends Effect.Service<Bundles>()("@rec/registry-service/Bundles", {
  effect: Effect.gen(function*() {
    const owners = yield* Owners
    const { limits } = yield* Config.settings
    const checker = make({ limits, knownOwner: (reference) => Option.isSome(owners.lookup(reference)) })
    return {
      limits,
      /** Checks an uploaded bundle (UTF-8 YAML). */
      check: Effect.fn("Bundles.check")(function*(bytes: Uint8Array) {
        yield* Effect.annotateCurrentSpan("bundle.bytes", bytes.length)
        const result = yield* checker.checkBytes(bytes)
        yield* Effect.annotateCurrentSpan({ "bundle.problems": result.problems.length, "bundle.community": result.community ?? "" })
        return result
      })
    }
  })
}) {}
