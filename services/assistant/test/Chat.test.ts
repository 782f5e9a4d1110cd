/**
 * `POST /chat` with the offline providers (local embedder, extractive answerer), read with a real
 * SSE parser (`eventsource-parser`): the frames the chat frontend expects, in order, the headers
 * that keep proxies from buffering, the `[DONE]` sentinel, the conversation created and titled,
 * both turns stored, follow-ups, citations off, attachments only, and the refusals before the
 * stream starts. Served at the root and under `/api`.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Answerer from "@rec/assistant-service/Answerer"
import { answerOf, baseUrl, call, chat, fileForm, serviceLayer, tokens } from "./helpers.js"

const handbookNote = `# Shared energy

Shared energy is, for each hour, the minimum between the energy fed into the grid by the community's plants and the energy withdrawn by its members.

## Premium tariff

The premium tariff on shared energy is paid by the GSE for twenty years.
`

layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("chat over SSE", (it) => {
  const setup = Effect.gen(function*() {
    const mint = yield* tokens
    const token = yield* mint("participant")
    const url = yield* baseUrl
    return { token, url, mint }
  })

  it.effect("streams meta, sources, tokens, done and [DONE], and stores both turns", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const uploaded = yield* call("POST", "/upload", { token, form: fileForm("note.md", handbookNote) })
      expect(uploaded.status).toBe(201)

      const reply = yield* chat(`${url}/api/chat`, token, { message: "How is shared energy calculated each hour?" })
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toBe("text/event-stream; charset=utf-8")
      expect(reply.headers["cache-control"]).toBe("no-cache")
      expect(reply.headers["x-accel-buffering"]).toBe("no")

      // No `event:` lines: every event is a default "message" with a one-line JSON body.
      expect(reply.events.every((e) => e.event === undefined)).toBe(true)
      expect(reply.text).not.toMatch(/^event:/m)
      expect(reply.events[reply.events.length - 1].data).toBe("[DONE]")
      const types = reply.frames.map((f) => f.type)
      expect(types[0]).toBe("meta")
      expect(types[1]).toBe("sources")
      expect(types[types.length - 1]).toBe("done")
      expect(types.slice(2, -1).every((t) => t === "token")).toBe(true)
      expect(types.filter((t) => t === "token").length).toBeGreaterThan(10)
      expect(reply.frames[reply.frames.length - 1]).toEqual({ type: "done", data: null })

      const meta = reply.frames[0].data as { conversation_id: string; title: string }
      expect(meta.title).toBe("How is shared energy calculated each hour?")
      const sources = reply.frames[1].data as ReadonlyArray<{ source: string; title: string; metadata: { attachment_id: string; kind: string } }>
      expect(sources[0].source).toBe(`attachment://${(uploaded.body as { id: string }).id}`)
      expect(sources[0].metadata.kind).toBe("upload")
      expect(sources[0].title).toBe("Shared energy")

      const answer = answerOf(reply)
      expect(answer.startsWith(Answerer.noModelNotice)).toBe(true)
      expect(answer).toContain("the minimum between the energy fed into the grid")

      const messages = yield* call("GET", `/conversations/${meta.conversation_id}/messages`, { token })
      expect(messages.status).toBe(200)
      const stored = (messages.body as { messages: ReadonlyArray<{ role: string; content: string; status: string; sources: Array<unknown> }> }).messages
      expect(stored.map((m) => [m.role, m.status])).toEqual([["user", "complete"], ["assistant", "complete"]])
      expect(stored[0].content).toBe("How is shared energy calculated each hour?")
      expect(stored[1].content).toBe(answer)
      expect(stored[1].sources).toHaveLength(sources.length)

      const list = yield* call("GET", "/conversations", { token })
      expect(list.body).toMatchObject({
        items: [{ id: meta.conversation_id, title: meta.title, message_count: 2 }],
        total: 1,
        limit: 50,
        offset: 0
      })
    }))

  it.effect("continues a conversation, and the same stream comes from the root path", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const first = yield* chat(`${url}/chat`, token, { message: "What is the premium tariff?" })
      const id = (first.frames[0].data as { conversation_id: string }).conversation_id
      const second = yield* chat(`${url}/chat`, token, { message: "For how long?", conversation_id: id })
      expect(second.status).toBe(200)
      expect(second.frames[0].data).toEqual({ conversation_id: id, title: "What is the premium tariff?" })
      // The short follow-up is searched with the previous question: the tariff passage comes back.
      expect(answerOf(second)).toContain("twenty years")
      const messages = yield* call("GET", `/api/conversations/${id}/messages`, { token })
      expect((messages.body as { total: number }).total).toBe(4)
    }))

  it.effect("leaves the sources frame out when citations are off", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const reply = yield* chat(`${url}/api/chat`, token, { message: "What is shared energy?", include_citations: false })
      expect(reply.frames.map((f) => f.type)).not.toContain("sources")
      expect(reply.frames[0].type).toBe("meta")
      expect(reply.frames[1].type).toBe("token")
    }))

  it.effect("summarises attached files when the message is empty", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const uploaded = yield* call("POST", "/upload", {
        token,
        form: fileForm("contract.txt", "The producer makes the warehouse plant available to the community for twenty years.\n\nThe community pays no rent.")
      })
      const id = (uploaded.body as { id: string }).id
      const reply = yield* chat(`${url}/api/chat`, token, { message: "", attachment_ids: [id] })
      expect(reply.status).toBe(200)
      expect((reply.frames[0].data as { title: string }).title).toBe("Files: contract.txt")
      const sources = reply.frames[1].data as ReadonlyArray<{ metadata: { attachment_id: string } }>
      expect(sources[0].metadata.attachment_id).toBe(id)
      expect(answerOf(reply)).toContain("warehouse plant")
    }))

  it.effect("knows the page the user is on", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const reply = yield* chat(`${url}/api/chat`, token, {
        message: "What does the self-consumption rate mean?",
        context: { page: "overview", data: { self_consumption_rate: 0.38, production_kwh: 412 } }
      })
      expect(answerOf(reply)).toContain("On the page overview: self_consumption_rate: 0.38; production_kwh: 412.")
    }))

  it.effect("refuses before streaming: empty message, unknown conversation or attachment, bad fields, no token", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const empty = yield* chat(`${url}/api/chat`, token, { message: "   " })
      expect(empty.status).toBe(400)
      expect(empty.body).toEqual({ detail: "The message is empty: write a question, or attach files to summarise" })

      const unknown = "5f0c2f6e-9d1b-4c39-8a8e-2f1d7c3b9a10"
      const conversation = yield* chat(`${url}/api/chat`, token, { message: "hi", conversation_id: unknown })
      expect(conversation.status).toBe(404)
      expect(conversation.body).toEqual({ detail: `No conversation ${unknown} for this user` })

      const attachment = yield* chat(`${url}/api/chat`, token, { message: "hi", attachment_ids: [unknown] })
      expect(attachment.status).toBe(404)
      expect(attachment.body).toEqual({ detail: `No attachment ${unknown} for this user` })

      const invalid = yield* chat(`${url}/api/chat`, token, { message: 42, conversation_id: "nope", top_k: 0 })
      expect(invalid.status).toBe(400)
      const issues = (invalid.body as { issues: ReadonlyArray<{ path: ReadonlyArray<string> }> }).issues.map((i) => i.path.join("."))
      expect(issues.sort()).toEqual(["conversation_id", "message", "top_k"])

      const tooLong = yield* chat(`${url}/api/chat`, token, { message: "x".repeat(16_001) })
      expect(tooLong.status).toBe(400)

      const anonymous = yield* call("POST", "/api/chat", { json: { message: "hi" } })
      expect(anonymous.status).toBe(401)

      // Nothing was stored for the refused requests.
      const list = yield* call("GET", "/conversations", { token })
      const titles = (list.body as { items: ReadonlyArray<{ title: string }> }).items.map((c) => c.title)
      expect(titles).not.toContain("hi")
    }))
})
