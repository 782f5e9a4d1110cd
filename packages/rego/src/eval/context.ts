// Per-evaluation state. A `Root` lives for one query evaluation (limits, strict mode, print sink,
// the fixed clock); a `Ctx` is one scope of it: the top level, or the inside of a `with`
// modifier (which replaces input, data or functions and therefore gets fresh caches).

import type { BuiltinContext } from "../builtins/registry.js"
import type { Callee } from "../compiler/ir.js"
import { type Location, RegoEvalError } from "../errors.js"
import type { Value } from "../value.js"

/** Marks "evaluated, undefined" in caches. */
export const UNDEF: unique symbol = Symbol("undefined")
export type Cached = Value | typeof UNDEF | undefined

export type Frame = unknown[]
/** A continuation: called once per solution; returns true to stop the enumeration. */
export type Cont = (c: Ctx, f: Frame) => boolean
/** A value continuation. */
export type VCont = (c: Ctx, f: Frame, v: Value) => boolean
/** Enumerates the values of a term. */
export type Gen = (c: Ctx, f: Frame, k: VCont) => boolean
/** Computes the single value of a term (undefined when it has none). */
export type Fn = (c: Ctx, f: Frame) => Value | undefined

export interface Limits {
  /** Maximum evaluation steps (expressions evaluated) per query. */
  readonly maxSteps?: number
  /** Maximum wall time per query, in milliseconds. */
  readonly timeoutMs?: number
}

export type PrintSink = (message: string, location: Location | undefined) => void

export interface RootOptions {
  readonly strict: boolean
  readonly limits: Limits
  readonly print: PrintSink
  readonly env: Readonly<Record<string, string>>
  readonly nowNs?: bigint
}

const CHECK_EVERY = 1024

export class Root implements BuiltinContext {
  steps = 0
  nextCheck: number
  readonly maxSteps: number
  readonly deadline: number
  readonly strict: boolean
  readonly cache = new Map<string, unknown>()
  readonly env: Readonly<Record<string, string>>
  location: Location | undefined = undefined
  private readonly printSink: PrintSink
  private now: bigint | undefined
  private readonly timeoutMs: number

  constructor(o: RootOptions) {
    this.strict = o.strict
    this.maxSteps = o.limits.maxSteps ?? Number.POSITIVE_INFINITY
    this.timeoutMs = o.limits.timeoutMs ?? Number.POSITIVE_INFINITY
    this.deadline = Number.isFinite(this.timeoutMs) ? performance.now() + this.timeoutMs : Number.POSITIVE_INFINITY
    this.nextCheck = Math.min(this.maxSteps, CHECK_EVERY)
    this.printSink = o.print
    this.env = o.env
    this.now = o.nowNs
  }

  get nowNs(): bigint {
    if (this.now === undefined) this.now = BigInt(Date.now()) * 1000000n
    return this.now
  }

  charge(n: number): void {
    this.steps += n
    if (this.steps > this.nextCheck) this.check()
  }

  checkLimits(): void {
    this.check()
  }

  print(message: string, location: Location | undefined): void {
    this.printSink(message, location)
  }

  /** Called when `steps` passes `nextCheck`: enforces the step and time limits. */
  check(): void {
    if (this.steps > this.maxSteps) {
      throw new RegoEvalError("eval_cancel_error", `evaluation exceeded the limit of ${this.maxSteps} steps`, this.location)
    }
    if (performance.now() > this.deadline) {
      throw new RegoEvalError("eval_cancel_error", `evaluation exceeded the time limit of ${this.timeoutMs} ms`, this.location)
    }
    this.nextCheck = Math.min(this.maxSteps, this.steps + CHECK_EVERY)
  }
}

/** Replacements of parts of `data` made by `with data.x as v`. */
export interface Overlay {
  /** The replacement at this path, if the path itself was replaced. */
  value?: Value
  children?: Map<string, { key: Value; node: Overlay }>
}

/** A replaced function: by a constant value or by another function. */
export type Mock = { readonly value: Value } | { readonly fn: Callee }

export class Ctx {
  /** Cached documents of rule nodes, by node id (see UNDEF). */
  cache: Cached[] | undefined = undefined
  /** Memoised function results, by group id: nested maps keyed by the arguments (see Runtime.call). */
  fnCache: Map<number, Map<unknown, unknown>> | undefined = undefined
  /** Comprehensions computed once per scope: results, or indices keyed by closure variables. */
  compCache: Map<number, unknown> | undefined = undefined

  constructor(
    readonly input: Value | undefined,
    readonly data: Value,
    readonly overlay: Overlay | undefined,
    readonly mocks: Map<string, Mock> | undefined,
    /** The scope this `with` scope was entered from. */
    readonly outer: Ctx | undefined,
    readonly root: Root
  ) {}
}
