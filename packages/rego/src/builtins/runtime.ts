// Builtins about the evaluation environment: opa.runtime, trace, rand.intn, and the I/O builtins
// this engine does not provide (http.send). Unavailable builtins still exist so that policies
// compile and tests can replace them with `with http.send as mock`.

import type { PlainObject } from "../value.js"
import { int, obj, str } from "./args.js"
import { checkHTTPRequestKeys } from "./httprequest.js"
import { type BuiltinDef, BuiltinError } from "./registry.js"

export const runtime: BuiltinDef[] = [
  {
    name: "opa.runtime",
    arity: 0,
    nondeterministic: true,
    fn: (_a, ctx): PlainObject => (Object.keys(ctx.env).length === 0 ? {} : { env: { ...ctx.env } })
  },
  {
    name: "trace",
    arity: 1,
    fn: ([x]) => {
      str(x, 1)
      return true
    }
  },
  {
    name: "rand.intn",
    arity: 2,
    nondeterministic: true,
    fn: ([s, n], ctx) => {
      const k = str(s, 1)
      let m = int(n, 2)
      if (m === 0) return 0
      if (m < 0) m = -m
      const key = `rand.intn/${k}-${m}`
      const cached = ctx.cache.get(key)
      if (typeof cached === "number") return cached
      const r = Math.floor(Math.random() * m)
      ctx.cache.set(key, r)
      return r
    }
  },
  {
    name: "http.send",
    arity: 1,
    nondeterministic: true,
    fn: ([req]) => {
      // The request is validated as OPA does, so that policies get the same type errors.
      checkHTTPRequestKeys(obj(req, 1), true)
      throw new BuiltinError("eval_builtin_error", "HTTP requests are not available in this engine (replace it with `with http.send as ...`, or register an implementation)", true)
    }
  }
]
