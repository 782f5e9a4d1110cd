/**
 * The caller's notifications, kept by the nudging service and read with the caller's token: the
 * list is the caller's own in their community (the nudging service files notifications per user
 * and community; a user outside any community has those filed under none). Marking read and
 * deleting go by id; the nudging service answers 404 for another user's notification, exactly as
 * for one that does not exist, and the gateway passes that on.
 */
import type { Domain as Nudging } from "@rec/nudging-service"
import * as Effect from "effect/Effect"
import type { Caller } from "./Access.js"
import { NudgingClient } from "./Clients.js"
import type * as Domain from "./Domain.js"
import { Membership } from "./Membership.js"

/** The nudging record as the app shows it (without delivery and deduplication internals). */
export const view = (n: Nudging.Notification): Domain.Notification => ({
  id: n.id,
  title: n.title,
  body: n.body,
  severity: n.severity,
  kind: n.kind,
  family: n.family,
  type: n.type,
  url: n.url,
  community_id: n.community_id,
  created_at: n.created_at,
  read_at: n.read_at,
  clicked_at: n.clicked_at
})

export interface ListOptions {
  readonly limit: number
  readonly offset: number
  readonly unread: boolean
}

export class Notifications extends Effect.Service<Notifications>()("participant-gateway/Notifications", {
  effect: Effect.gen(function*() {
    const nudging = yield* NudgingClient
    const membership = yield* Membership

    const list = Effect.fn("Notifications.list")(function*(caller: Caller, options: ListOptions) {
      const community = yield* membership.nudgingCommunity(caller)
      const page = yield* nudging.listNotifications(caller.token, {
        user_id: caller.subject.id,
        community_id: community,
        limit: options.limit,
        offset: options.offset,
        unread: options.unread
      })
      return { items: page.items.map(view), total: page.total, limit: page.limit, offset: page.offset } satisfies Domain.NotificationPage
    })

    const markRead = Effect.fn("Notifications.markRead")(function*(caller: Caller, id: string) {
      return view(yield* nudging.markRead(caller.token, id))
    })

    const remove = Effect.fn("Notifications.remove")(function*(caller: Caller, id: string) {
      yield* nudging.deleteNotification(caller.token, id)
    })

    return { list, markRead, remove }
  })
}) {}
