/**
 * The policy service's internal RPC (`@effect/rpc`, HTTP protocol, JSON serialisation, served
 * at `POST /rpc` next to the public HTTP API). It is what the remote `PolicyEngine` calls: the
 * caller hands over a full policy input (the subject it authenticated itself), so several
 * decisions travel in one round trip and no user token is forwarded.
 *
 * Authentication: `Authorization: Bearer <token>` of a **service account** (client
 * credentials); user tokens are refused, because the input's subject is trusted as given.
 * `Reload` additionally needs the `policy.admin` scope.
 */
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as RpcMiddleware from "@effect/rpc/RpcMiddleware"
import type { Subject } from "@rec/auth/Subject"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import {
  Decision,
  DecisionError,
  DecisionRequest,
  PolicyAccessDenied,
  PolicyLoadError,
  PolicyStatus,
  PolicyUnavailable,
  ReloadResult
} from "./Decision.js"
import { PolicyInput } from "./PolicyInput.js"

/** The authenticated service account calling the RPC. */
export class RpcCaller extends Context.Tag("@rec/policy/RpcCaller")<RpcCaller, Subject>() {}

export class RpcAuthentication extends RpcMiddleware.Tag<RpcAuthentication>()("@rec/policy/RpcAuthentication", {
  provides: RpcCaller,
  failure: PolicyAccessDenied
}) {}

/** Most decisions one `DecideAll` call may carry. */
export const maxBatch = 200

export class PolicyRpcs extends RpcGroup.make(
  Rpc.make("Decide", { payload: DecisionRequest, success: Decision, error: DecisionError }),
  Rpc.make("DecideAll", {
    payload: { requests: Schema.Array(DecisionRequest).pipe(Schema.maxItems(maxBatch)) },
    success: Schema.Array(Decision),
    error: DecisionError
  }),
  Rpc.make("Evaluate", {
    payload: { package: Schema.String, rule: Schema.String, input: PolicyInput },
    success: Schema.Option(Schema.Unknown),
    error: DecisionError
  }),
  Rpc.make("Status", { success: PolicyStatus, error: PolicyUnavailable }),
  Rpc.make("Reload", {
    success: ReloadResult,
    error: Schema.Union(PolicyLoadError, PolicyUnavailable, PolicyAccessDenied)
  })
).middleware(RpcAuthentication) {}

/** The path the policy service serves the RPC at. */
export const path = "/rpc" as const
