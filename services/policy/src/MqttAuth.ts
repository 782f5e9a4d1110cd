/**
 * The MQTT broker's questions (mosquitto-go-auth's HTTP and remote-JWT backends, and the
 * embedded broker through `BrokerAuth`): may this client connect, may it publish/subscribe/read
 * this topic, is it a superuser.
 *
 * Credentials: the client's MQTT password (or user name) is an access token of the platform's
 * identity provider. go-auth's remote JWT mode sends it as `Authorization: Bearer`; its HTTP
 * backend sends it in the body (`password` at connect, `username` for ACL and superuser checks
 * when clients put the token there). A plain user name is not a credential: without a token
 * the answer is "missing token", never a guess about who the user is.
 *
 * Answers: `{ok: true, reason}` (200) or `MqttDenied` `{ok: false, reason}` (403). When the
 * identity provider's keys or the policies are unavailable the answer is `MqttUnavailable`
 * (503): go-auth denies and logs 5xx as errors, so an outage is visible without failing open.
 */
import { AuthFailure, TokenVerifier } from "@rec/auth"
import type { Subject } from "@rec/auth/Subject"
import { type Decision, PolicyInput } from "@rec/policy"
import { RequestContext } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Decisions } from "./Decisions.js"
import { accActions, type MqttResult } from "./Domain.js"
import { MqttDenied, MqttUnavailable } from "./Errors.js"
import * as Inputs from "./Inputs.js"

const compactJws = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/** Whether a credential field holds a token rather than a user name. */
export const looksLikeJwt = (value: unknown): value is string => typeof value === "string" && compactJws.test(value)

/** The first of the candidates that is a token. */
export const tokenFrom = (...candidates: ReadonlyArray<unknown>): Option.Option<string> =>
  Option.fromNullable(candidates.find(looksLikeJwt))

const denied = (reason: string) => new MqttDenied({ reason })

const fromDecisionError = (error: Decision.DecisionError) =>
  error._tag === "PolicyUnavailable"
    ? new MqttUnavailable({ reason: `policies unavailable: ${error.message}` })
    : new MqttUnavailable({ reason: `policy evaluation failed: ${error.message}` })

export class MqttAuth extends Effect.Service<MqttAuth>()("@rec/policy-service/MqttAuth", {
  effect: Effect.gen(function*() {
    const verifier = yield* TokenVerifier.TokenVerifier
    const decisions = yield* Decisions

    const authenticate = (token: Option.Option<string>): Effect.Effect<Subject, MqttDenied | MqttUnavailable> =>
      Option.match(token, {
        onNone: () => Effect.fail(denied("missing token")),
        onSome: (t) =>
          verifier.verify(t).pipe(
            Effect.tap((subject) => RequestContext.annotateUser(subject.id)),
            Effect.mapError((failure: AuthFailure.AuthFailure) =>
              failure.isCredentialProblem
                ? denied(`invalid credentials: ${failure.message}`)
                : new MqttUnavailable({ reason: "the identity provider's signing keys are unavailable" })
            )
          )
      })

    /** CONNECT: the token must verify; no policy is involved. */
    const user = (token: Option.Option<string>): Effect.Effect<MqttResult, MqttDenied | MqttUnavailable> =>
      Effect.as(authenticate(token), { ok: true, reason: "authenticated" })

    /**
     * PUBLISH/SUBSCRIBE/read: every action of the `acc` mask is decided (subscribe, publish,
     * read, in that order); the first denial answers. `acc` 0 names no action and is denied.
     */
    const acl = (
      token: Option.Option<string>,
      request: { readonly topic: string; readonly clientid: string; readonly acc: number },
      source: string
    ): Effect.Effect<MqttResult, MqttDenied | MqttUnavailable> =>
      Effect.gen(function*() {
        const subject = PolicyInput.subjectOf(yield* authenticate(token))
        const actions = accActions(request.acc)
        if (actions.length === 0) return yield* Effect.fail(denied(`acc ${request.acc} names no action`))
        const requestId = yield* RequestContext.requestId
        for (const action of actions) {
          const question = Inputs.mqttTopic(subject, requestId, { topic: request.topic, clientid: request.clientid, action })
          const decision = yield* decisions.decide(question, source).pipe(Effect.mapError(fromDecisionError))
          if (!decision.allowed) return yield* Effect.fail(denied(`${action}: ${decision.reason}`))
        }
        return { ok: true, reason: "authorized" }
      })

    /** Superuser: the `superuser` rule of `rec.mqtt.acl` (group admins or scope mqtt.admin). */
    const superuser = (token: Option.Option<string>, source: string): Effect.Effect<MqttResult, MqttDenied | MqttUnavailable> =>
      Effect.gen(function*() {
        const subject = PolicyInput.subjectOf(yield* authenticate(token))
        const requestId = yield* RequestContext.requestId
        const question = Inputs.mqttTopic(subject, requestId, { topic: "#", clientid: "", action: "superuser" })
        const decision = yield* decisions.check(question, "superuser", source, {
          allowed: "superuser",
          denied: "not superuser"
        }).pipe(Effect.mapError(fromDecisionError))
        return decision.allowed ? { ok: true, reason: "superuser" } : yield* Effect.fail(denied("not superuser"))
      })

    return { user, acl, superuser } as const
  })
}) {}
