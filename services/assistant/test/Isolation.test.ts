/**
 * Users see their own data and the shared training materials, never another user's (the
 * original assistant retrieved any user's uploads: reference §2.4). Retrieval, the attachment
 * endpoints and the conversation endpoints are checked with two real users of the dev identity
 * provider; another user's ids answer 404, exactly like ids that do not exist.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { answerOf, baseUrl, call, chat, fileForm, serviceLayer, tokens } from "./helpers.js"

const secret = "# Private contract\n\nThe secret price of the Rossi family supply is 0.0917 euro per kWh, agreed with Trentino Power.\n"
const unknown = "0b8e3c1a-7f6d-4e2b-9a5c-3d1f0e9b8a7c"

layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("isolation between users", (it) => {
  it.effect("one user's uploads, conversations and answers never reach another", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const alice = yield* mint("participant")
      const bob = yield* mint("participant-consumer")
      const url = yield* baseUrl

      const upload = (yield* call("POST", "/upload", { token: alice, form: fileForm("contract.md", secret) })).body as { id: string }
      const question = "What is the secret price of the Rossi family supply agreed with Trentino Power?"

      // Alice finds her document.
      const own = yield* chat(`${url}/api/chat`, alice, { message: question })
      const ownSources = own.frames[1].data as ReadonlyArray<{ metadata: { attachment_id: string } }>
      expect(ownSources[0].metadata.attachment_id).toBe(upload.id)
      expect(answerOf(own)).toContain("0.0917")
      const aliceConversation = (own.frames[0].data as { conversation_id: string }).conversation_id

      // Bob asks the very same question: nothing of Alice's comes back, in sources or answer.
      const other = yield* chat(`${url}/api/chat`, bob, { message: question })
      const otherSources = other.frames[1].data as ReadonlyArray<{ metadata: { attachment_id: string }; text: string }>
      expect(otherSources.map((s) => s.metadata.attachment_id)).not.toContain(upload.id)
      expect(JSON.stringify(other.frames)).not.toContain("0.0917")
      // Nor when he names her attachment.
      const named = yield* chat(`${url}/api/chat`, bob, { message: question, attachment_ids: [upload.id] })
      expect(named.status).toBe(404)
      expect(named.body).toEqual({ detail: `No attachment ${upload.id} for this user` })

      // Attachments: not listed, not readable, not deletable; the same answers as for an unknown id.
      const list = yield* call("GET", "/attachments?scope=all", { token: bob })
      expect((list.body as { items: ReadonlyArray<{ id: string }> }).items.map((a) => a.id)).not.toContain(upload.id)
      for (const id of [upload.id, unknown]) {
        const raw = yield* call("GET", `/attachments/${id}/raw`, { token: bob })
        expect(raw.status).toBe(404)
        expect(raw.body).toEqual({ detail: `No attachment ${id} for this user` })
        const deleted = yield* call("DELETE", `/api/attachments/${id}`, { token: bob })
        expect(deleted.status).toBe(404)
        expect(deleted.body).toEqual({ detail: `No attachment ${id} for this user` })
      }

      // Conversations: not listed, messages not readable, not deletable, not continued.
      const conversations = yield* call("GET", "/conversations", { token: bob })
      expect((conversations.body as { items: ReadonlyArray<{ id: string }> }).items.map((c) => c.id)).not.toContain(aliceConversation)
      for (const id of [aliceConversation, unknown]) {
        const messages = yield* call("GET", `/conversations/${id}/messages`, { token: bob })
        expect(messages.status).toBe(404)
        expect(messages.body).toEqual({ detail: `No conversation ${id} for this user` })
        const deleted = yield* call("DELETE", `/conversations/${id}`, { token: bob })
        expect(deleted.status).toBe(404)
        const continued = yield* chat(`${url}/api/chat`, bob, { message: "hello", conversation_id: id })
        expect(continued.status).toBe(404)
      }

      // Alice still has everything.
      expect((yield* call("GET", `/attachments/${upload.id}/raw`, { token: alice })).text).toBe(secret)
      const messages = yield* call("GET", `/conversations/${aliceConversation}/messages`, { token: alice })
      expect((messages.body as { total: number }).total).toBe(2)

      // Deleting her conversation removes its messages.
      const deleted = yield* call("DELETE", `/conversations/${aliceConversation}`, { token: alice })
      expect(deleted.body).toEqual({ status: "deleted", conversation_id: aliceConversation, messages_removed: 2 })
      expect((yield* call("GET", `/conversations/${aliceConversation}/messages`, { token: alice })).status).toBe(404)
    }))

  it.effect("GET /user describes the caller from the token", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const participant = yield* call("GET", "/api/user", { token: yield* mint("participant") })
      expect(participant.body).toEqual({
        sub: "52409e36-6d23-45ed-bb1e-d6c564a2f454",
        email: "giulia.romano@rec.example",
        name: "Giulia Romano",
        username: "participant",
        groups: ["default-roles-rec", "offline_access", "uma_authorization"],
        is_admin: false
      })
      const admin = yield* call("GET", "/user", { token: yield* mint("admin") })
      expect(admin.body).toMatchObject({ username: "admin", is_admin: true })
      const anonymous = yield* call("GET", "/user")
      expect(anonymous.status).toBe(401)
      expect(anonymous.body).toEqual({ detail: "Missing bearer token" })
    }))
})
