// The request object of http.send, as OPA validates it (validateHTTPRequestOperand): shared by
// http.send and providers.aws.sign_req, which signs such a request.

import { formatValue } from "../format.js"
import { type RegoObject, objectGet, objectKeys, RegoSet } from "../value.js"
import { BuiltinError } from "./registry.js"

/** The keys an http.send request may have (OPA v1). */
export const HTTP_REQUEST_KEYS: ReadonlySet<string> = new Set([
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
  "max_retry_attempts",
  "cache_ignored_headers"
])

/**
 * Unknown keys first, then the required `method` and `url`, with OPA's messages ("operand 1
 * invalid request parameters(s): {...}"). `halt`: raised even without strict builtin errors.
 */
export const checkHTTPRequestKeys = (req: RegoObject, halt = false): void => {
  const keys = objectKeys(req)
  const invalid = keys.filter((k) => typeof k !== "string" || !HTTP_REQUEST_KEYS.has(k))
  if (invalid.length > 0) throw new BuiltinError("eval_type_error", `operand 1 invalid request parameters(s): ${formatValue(RegoSet.of(invalid))}`, halt)
  const missing = ["method", "url"].filter((k) => objectGet(req, k) === undefined)
  if (missing.length > 0) throw new BuiltinError("eval_type_error", `operand 1 missing required request parameters(s): ${formatValue(RegoSet.of(missing))}`, halt)
}
