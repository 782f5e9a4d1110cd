/**
 * The internal RPC (`@rec/policy`'s `PolicyRpc.PolicyRpcs`) served at `POST /rpc` beside the
 * HTTP API: what the remote `PolicyEngine` of other services calls. Only service accounts may
 * call it (the caller supplies the subject of the input, so a user token must not be able to
 * ask about anyone); `Reload` also needs the `policy.admin` scope. Every decision is audited
 * with the calling service's client id as its source.
 */
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import { Authentication, TokenVerifier } from "@rec/auth"
import { Decision, PolicyRpc } from "@rec/policy"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Decisions } from "./Decisions.js"

const refuse = (message: string) => new Decision.PolicyAccessDenied({ message })

export const AuthenticationLive = Layer.effect(
  PolicyRpc.RpcAuthentication,
  Effect.map(TokenVerifier.TokenVerifier, (verifier) => ({ headers }) =>
    Effect.gen(function*() {
      const token = Authentication.extractToken(headers, verifier.config.jwtHeaderName)
      if (Either.isLeft(token)) return yield* Effect.fail(refuse(token.left.message))
      if (Option.isNone(token.right)) return yield* Effect.fail(refuse("a service account token is required"))
      const subject = yield* verifier.verify(token.right.value).pipe(Effect.mapError((f) => refuse(f.message)))
      if (subject.type !== "service") return yield* Effect.fail(refuse("only service accounts may use the policy RPC"))
      return subject
    }))
)

export const HandlersLive = PolicyRpc.PolicyRpcs.toLayer(Effect.gen(function*() {
  const decisions = yield* Decisions
  const caller = Effect.map(PolicyRpc.RpcCaller, (subject) => subject.id)
  return {
    Decide: (request) => Effect.flatMap(caller, (source) => decisions.decide(request, source)),
    DecideAll: ({ requests }) =>
      Effect.flatMap(caller, (source) => Effect.forEach(requests, (request) => decisions.decide(request, source))),
    Evaluate: ({ input, package: pkg, rule }) =>
      Effect.flatMap(caller, (source) => decisions.evaluate({ package: pkg, input }, rule, source)),
    Status: () => decisions.status,
    Reload: () =>
      Effect.gen(function*() {
        const subject = yield* PolicyRpc.RpcCaller
        if (!subject.hasScope("policy.admin")) {
          return yield* Effect.fail(refuse("reloading the policies needs the policy.admin scope"))
        }
        return yield* decisions.reload
      })
  }
}))

/** The RPC server route; needs `Decisions` and a `TokenVerifier`. */
export const layer = RpcServer.layerHttpRouter({ group: PolicyRpc.PolicyRpcs, path: PolicyRpc.path, protocol: "http" }).pipe(
  Layer.provide([HandlersLive, AuthenticationLive, RpcSerialization.layerJson])
)
