/**
 * Browser push subscriptions: register (again: refresh keys, enable), unsubscribe, and a test
 * push sent right away to each of the user's subscriptions in a community.
 */
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import type * as Domain from "./Domain.js"
import { Settings } from "./Settings.js"
import { type SubscriptionRow, SubscriptionsRepo } from "./SubscriptionsRepo.js"
import { endpointAllowed, keyProblems, WebPush } from "./WebPush.js"

const toView = (row: SubscriptionRow): Domain.PushSubscription => ({
  id: row.id,
  user_id: row.userId,
  community_id: row.communityId === "" ? null : row.communityId,
  endpoint_origin: originOf(row.endpoint),
  enabled: row.enabled,
  disabled_reason: row.disabledReason,
  created_at: row.createdAt,
  updated_at: row.updatedAt
})

const originOf = (endpoint: string) => {
  try {
    return new URL(endpoint).origin
  } catch {
    return ""
  }
}

export class Subscriptions extends Effect.Service<Subscriptions>()("nudging/Subscriptions", {
  effect: Effect.gen(function*() {
    const repo = yield* SubscriptionsRepo
    const webPush = yield* WebPush
    const settings = yield* Settings
    const clock = yield* Effect.clock
    const now = Effect.map(clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

    const subscribe = (request: Domain.SubscribeRequest) =>
      Effect.gen(function*() {
        const issues: Array<HttpErrors.Issue> = []
        if (!endpointAllowed(settings.pushEndpoints, request.subscription.endpoint)) {
          issues.push({
            path: ["subscription", "endpoint"],
            message: "is not the URL of an allowed push service (WEBPUSH_ALLOWED_ENDPOINTS)"
          })
        }
        for (const problem of keyProblems(request.subscription.keys)) {
          issues.push({ path: ["subscription", "keys", problem.field], message: problem.message })
        }
        if (issues.length > 0) {
          return yield* Effect.fail(new HttpErrors.UnprocessableEntity({
            detail: `Subscription not saved: ${issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
            issues
          }))
        }
        const row = yield* repo.upsert({
          id: crypto.randomUUID(),
          userId: request.user_id,
          communityId: request.community_id ?? "",
          endpoint: request.subscription.endpoint,
          p256dh: request.subscription.keys.p256dh,
          auth: request.subscription.keys.auth
        }, yield* now)
        return toView(row)
      }).pipe(Effect.withSpan("Subscriptions.subscribe"))

    const unsubscribe = (request: Domain.UnsubscribeRequest) =>
      Effect.flatMap(now, (at) => repo.unsubscribe(request.user_id, request.community_id ?? "", request.endpoint, at)).pipe(
        Effect.map((removed) => ({ removed }))
      )

    const sendTest = (request: Domain.SendTestRequest) =>
      Effect.gen(function*() {
        const targets = yield* repo.forRecipient(request.user_id, request.community_id ?? "")
        const result = { subscriptions: targets.length, sent: 0, failed: 0, gone: 0, errors: [] as Array<string> }
        yield* Effect.forEach(targets, (target) =>
          Effect.gen(function*() {
            const sent = yield* webPush.send(target, {
              title: request.title ?? "Test notification",
              body: request.body ?? "Push notifications work on this device.",
              data: { url: request.url ?? "/" }
            }, "info")
            if (sent._tag === "Delivered") result.sent++
            else if (sent._tag === "Gone") {
              result.gone++
              yield* repo.markGone(target.id, yield* now)
            } else {
              result.failed++
              result.errors.push(sent.message)
            }
          }), { concurrency: 4, discard: true })
        return result
      }).pipe(Effect.withSpan("Subscriptions.sendTest"))

    return { subscribe, unsubscribe, sendTest }
  })
}) {}
