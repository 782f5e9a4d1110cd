// The builtin function registry. Every family of builtins lives in its own file under
// `src/builtins/` and exports a `BuiltinDef[]`; `src/builtins/index.ts` collects them. The
// evaluator knows nothing about individual builtins.

import type { Location } from "../errors.js"
import { type Value, typeName } from "../value.js"

/** Everything a builtin may need from the evaluation it runs in. */
export interface BuiltinContext {
  /** Raise builtin errors instead of making the expression undefined. */
  readonly strict: boolean
  /** Nanoseconds since the epoch, fixed for the whole query (OPA semantics for `time.now_ns`). */
  readonly nowNs: bigint
  /** Where the call is written. */
  readonly location: Location | undefined
  /** Per-query cache for non-deterministic builtins (e.g. `rand.intn`) and expensive parses. */
  readonly cache: Map<string, unknown>
  /** Writes a line produced by `print`. */
  readonly print: (message: string, location: Location | undefined) => void
  /** Environment variables visible to `opa.runtime()` (empty unless a host provides them). */
  readonly env: Readonly<Record<string, string>>
  /** Accounts for work proportional to n against the evaluation's step limit. */
  charge(n: number): void
  /** When the evaluation's time limit ends, as a `performance.now()` time (absent: no limit). */
  readonly deadline?: number
  /** Enforces the step and time limits now (for builtins that wait, such as test.sleep). */
  checkLimits?(): void
}

export interface BuiltinDef {
  /** Name as written in Rego, e.g. `count`, `json.marshal`. */
  readonly name: string
  /** Number of operands (an extra argument, when given, receives the result). */
  readonly arity: number
  /**
   * The implementation. Operands are fully evaluated values. Returns the result, or undefined
   * for "no result" (the expression is then undefined). Throws `BuiltinError` for errors.
   * A relation (`relation: true`) returns an array holding every result.
   */
  readonly fn: (args: Value[], ctx: BuiltinContext) => Value | undefined
  /** Yields several results (e.g. `walk`). */
  readonly relation?: boolean
  /** Returns no value at all (`print`); calls are statements. */
  readonly void?: boolean
  /** Takes any number of operands (`print`). */
  readonly variadic?: boolean
  /** Results differ between calls with equal operands (`rand.intn`, `time.now_ns`, ...). */
  readonly nondeterministic?: boolean
  /** Removed in Rego v1: calling it is a compile error. */
  readonly deprecated?: boolean
  /** Not available in this engine (I/O): calling it is an evaluation error. */
  readonly unavailable?: string
}

export type ErrorKind = "eval_type_error" | "eval_builtin_error"

/** A builtin failure. Undefined by default, raised when evaluating with strict builtin errors. */
export class BuiltinError extends Error {
  constructor(
    readonly code: ErrorKind,
    message: string,
    /** Raised even without strict mode (OPA's `Halt` errors). */
    readonly halt = false
  ) {
    super(message)
  }
}

/** `operand N must be T but got U` (OPA's NewOperandTypeErr). */
export const typeError = (pos: number, got: Value, ...expected: string[]): BuiltinError =>
  new BuiltinError(
    "eval_type_error",
    expected.length === 1
      ? `operand ${pos} must be ${expected[0]} but got ${typeName(got)}`
      : `operand ${pos} must be one of {${expected.join(", ")}} but got ${typeName(got)}`
  )

/** `operand N must be array of strings but got array containing number` style errors. */
export const elementTypeError = (pos: number, composite: Value, got: Value, ...expected: string[]): BuiltinError => {
  const t = typeName(composite)
  return new BuiltinError(
    "eval_type_error",
    expected.length === 1
      ? `operand ${pos} must be ${t} of ${expected[0]}s but got ${t} containing ${typeName(got)}`
      : `operand ${pos} must be ${t} of (any of) {${expected.join(", ")}} but got ${t} containing ${typeName(got)}`
  )
}

/** A free-form operand error: `operand N <message>`. */
export const operandError = (pos: number, message: string): BuiltinError => new BuiltinError("eval_type_error", `operand ${pos} ${message}`)

/** A failure of the builtin itself (`eval_builtin_error`), not of its operand types. */
export const builtinError = (message: string): BuiltinError => new BuiltinError("eval_builtin_error", message)

/**
 * Runs `f`, turning an error of class `failure` (the failure of the library code a builtin calls:
 * a Go-compatible parser, a regexp compiler, ...) into a builtin error with its message. Any
 * other error propagates as it is.
 */
export const asBuiltinError = <T>(failure: abstract new (...args: never[]) => Error, f: () => T): T => {
  try {
    return f()
  } catch (e) {
    if (e instanceof failure) throw builtinError(e.message)
    throw e
  }
}

/** A registry: name to definition. */
export class BuiltinRegistry {
  private readonly defs = new Map<string, BuiltinDef>()

  constructor(families: ReadonlyArray<readonly BuiltinDef[]> = []) {
    for (const f of families) this.register(...f)
  }

  register(...defs: BuiltinDef[]): this {
    for (const d of defs) this.defs.set(d.name, d)
    return this
  }

  get(name: string): BuiltinDef | undefined {
    return this.defs.get(name)
  }

  has(name: string): boolean {
    return this.defs.has(name)
  }

  names(): string[] {
    return [...this.defs.keys()].sort()
  }

  /** A copy with some builtins replaced or added (e.g. a host enabling `http.send`). */
  with(...defs: BuiltinDef[]): BuiltinRegistry {
    const r = new BuiltinRegistry()
    for (const d of this.defs.values()) r.register(d)
    return r.register(...defs)
  }
}
