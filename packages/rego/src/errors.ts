// Errors carry OPA's error codes and a source location. `message` follows OPA's text format
// (`file:row: code: message`) so that tools matching OPA output keep working; `location` has the
// column too, and `format()` renders `file:row:col: code: message`.

export interface Location {
  readonly file: string
  readonly row: number
  readonly col: number
}

export type ErrorCode =
  | "rego_parse_error"
  | "rego_compile_error"
  | "rego_type_error"
  | "rego_unsafe_var_error"
  | "rego_recursion_error"
  | "eval_conflict_error"
  | "eval_type_error"
  | "eval_builtin_error"
  | "eval_with_merge_error"
  | "eval_cancel_error"
  | "eval_limit_error"
  | "eval_internal_error"

const prefix = (loc: Location | undefined, withCol: boolean): string => {
  if (loc === undefined) return ""
  if (loc.file !== "") return `${loc.file}:${loc.row}${withCol ? ":" + loc.col : ""}: `
  return `${loc.row}:${loc.col}: `
}

/** One error with an OPA error code and, when known, where it happened. */
export class RegoError extends Error {
  override readonly name: string = "RegoError"
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly location?: Location
  ) {
    super(prefix(location, false) + code + ": " + detail)
  }

  /** `file:row:col: code: message`. */
  format(): string {
    return prefix(this.location, true) + this.code + ": " + this.detail
  }
}

/** A parse or compile failure: every error found, in source order. */
export class RegoCompileError extends Error {
  override readonly name = "RegoCompileError"
  constructor(readonly errors: readonly RegoError[]) {
    super(
      errors.length === 1
        ? `1 error occurred: ${errors[0].message}`
        : `${errors.length} errors occurred:\n${errors.map((e) => e.message).join("\n")}`
    )
  }

  /** The first error's code. */
  get code(): ErrorCode {
    return this.errors[0]?.code ?? "rego_compile_error"
  }
}

/** An error raised while evaluating (conflicts, strict builtin errors, limits). */
export class RegoEvalError extends RegoError {
  override readonly name = "RegoEvalError"
}

export const sortErrors = (errors: RegoError[]): RegoError[] =>
  errors.sort((a, b) => {
    const la = a.location
    const lb = b.location
    if (la === undefined || lb === undefined) return la === undefined ? (lb === undefined ? 0 : 1) : -1
    if (la.file !== lb.file) return la.file < lb.file ? -1 : 1
    return la.row - lb.row || la.col - lb.col
  })

/** Whether e is JavaScript's stack exhaustion (pathological nesting in a policy, data or input). */
export const isStackOverflow = (e: unknown): boolean => e instanceof RangeError && /call stack/i.test(e.message)
