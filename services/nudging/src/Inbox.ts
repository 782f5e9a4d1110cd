/**
 * The recipients' side of notification records: list, read one, mark read, delete (soft), and
 * the click of a tracking link. Records of another user are answered as missing (404), never
 * as forbidden, so ids do not tell whether they exist.
 */
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import { Access } from "./Access.js"
import type * as Domain from "./Domain.js"
import { NotificationsRepo } from "./NotificationsRepo.js"

export class Inbox extends Effect.Service<Inbox>()("nudging/Inbox", {
  effect: Effect.gen(function*() {
    const repo = yield* NotificationsRepo
    const access = yield* Access
    const clock = yield* Effect.clock
    const now = Effect.map(clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

    const notFound = (id: string) => new HttpErrors.NotFound({ detail: `No notification ${id} for this user` })

    /** The owner of a notification the caller may `action`, else 404. */
    const owned = (id: string, action: "read" | "write") =>
      Effect.gen(function*() {
        const owner = yield* repo.ownerOf(id)
        if (owner === undefined || !(yield* access.allowed(action, "notification", owner))) return yield* Effect.fail(notFound(id))
        return owner
      })

    const get = (id: string) =>
      Effect.gen(function*() {
        yield* owned(id, "read")
        const notification = yield* repo.find(id)
        if (notification === undefined) return yield* Effect.fail(notFound(id))
        return notification
      })

    const list = (query: typeof Domain.ListNotificationsParams.Type) =>
      Effect.gen(function*() {
        yield* access.require("read", "notification", query.user_id)
        const page = yield* repo.list({
          userId: query.user_id,
          communityId: query.community_id,
          limit: query.limit,
          offset: query.offset,
          unread: query.unread,
          status: query.status
        })
        return { items: page.items, total: page.total, limit: query.limit, offset: query.offset }
      })

    const markRead = (id: string) =>
      Effect.gen(function*() {
        yield* owned(id, "write")
        yield* repo.markRead(id, yield* now)
        return yield* get(id)
      })

    const remove = (id: string) =>
      Effect.gen(function*() {
        yield* owned(id, "write")
        yield* repo.softDelete(id, yield* now)
      })

    /** Records a click; the notification's page, or `undefined` for an unknown notification. */
    const click = (id: string, action: string) => Effect.flatMap(now, (at) => repo.recordClick(id, action, at))

    return { get, list, markRead, remove, click }
  })
}) {}
