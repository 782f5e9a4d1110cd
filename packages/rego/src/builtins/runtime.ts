// Builtins about the evaluation environment: opa.runtime, trace, rand.intn, and the I/O builtins
// this engine does not provide (http.send). Unavailable builtins still exist so that policies
// compile and tests can replace them with `with http.send as mock`.

import { formatValue } from "../format.js"
import { type PlainObject, objectKeys, RegoSet } from "../value.js"
import { int, obj, str } from "./args.js"
import { type BuiltinDef, BuiltinError } from "./registry.js"

const HTTP_KEYS: ReadonlySet<string> = new Set([
  "method",
  "url",
  "body",
  "enable_redirect",
  "force_json_decode",
  "force_yaml_decode",
  "headers",
  "raw_body",
  "tls_use_system_certs",
  "tls_ca_cert",
  "tls_ca_cert_file",
  "tls_ca_cert_env_variable",
  "tls_client_cert",
  "tls_client_cert_file",
  "tls_client_cert_env_variable",
  "tls_client_key",
  "tls_client_key_file",
  "tls_client_key_env_variable",
  "tls_insecure_skip_verify",
  "tls_server_name",
  "timeout",
  "cache",
  "force_cache",
  "force_cache_duration_seconds",
  "raise_error",
  "caching_mode",
  "max_retry_attempts"
])

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
      const o = obj(req, 1)
      const keys = objectKeys(o)
      const invalid = keys.filter((k) => typeof k !== "string" || !HTTP_KEYS.has(k))
      if (invalid.length > 0) throw new BuiltinError("eval_type_error", `operand 1 invalid request parameters(s): ${formatValue(RegoSet.of(invalid))}`, true)
      const missing = ["method", "url"].filter((k) => !keys.includes(k))
      if (missing.length > 0) throw new BuiltinError("eval_type_error", `operand 1 missing required request parameters(s): ${formatValue(RegoSet.of(missing))}`, true)
      throw new BuiltinError("eval_builtin_error", "HTTP requests are not available in this engine (replace it with `with http.send as ...`, or register an implementation)", true)
    }
  }
]
