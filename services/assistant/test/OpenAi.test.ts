/**
 * The OpenAI-compatible providers against a local fake server that speaks the real wire format:
 * `POST /v1/chat/completions` streaming `chat.completion.chunk` events and `data: [DONE]`, and
 * `POST /v1/embeddings`. What the assistant sends (model, key, messages with the system text,
 * history, sources and question), the tokens relayed as frames, a model that fails mid-stream
 * (a dropped connection, an error object in the stream, an error status), and a client that
 * goes away, which must stop the model call.
 */
import { expect, layer } from "@effect/vitest"
import * as Hashing from "@rec/assistant-service/Hashing"
import * as Prompt from "@rec/assistant-service/Prompt"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { baseUrl, call, chat, fileForm, serviceLayer, tokens } from "./helpers.js"

interface ChatCall {
  readonly headers: http.IncomingHttpHeaders
  readonly body: { model: string; stream: boolean; temperature: number; messages: Array<{ role: string; content: string }> }
  /** Set when the connection to the fake was closed before it finished its answer. */
  closedEarly: boolean
}

interface Fake {
  readonly url: string
  readonly chats: Array<ChatCall>
  readonly embeddings: Array<{ model: string; input: ReadonlyArray<string>; dimensions?: number }>
}

class FakeOpenAi extends Context.Tag("FakeOpenAi")<FakeOpenAi, Fake>() {}

const key = "test-key-not-secret"
const dimensions = 64

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: 1_760_000_000,
    model: "fake-chat",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
  })}\n\n`

const answerWords = ["Shared ", "energy ", "is ", "the ", "hourly ", "minimum ", "[1]."]

const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = ""
    req.on("data", (c) => (text += c))
    req.on("end", () => resolve(text))
  })

const FakeLive = Layer.scoped(
  FakeOpenAi,
  Effect.acquireRelease(
    Effect.promise(() => {
      const fake: { chats: Array<ChatCall>; embeddings: Fake["embeddings"] } = { chats: [], embeddings: [] }
      const server = http.createServer(async (req, res) => {
        if (req.headers.authorization !== `Bearer ${key}`) {
          res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "bad key" } }))
          return
        }
        const body = JSON.parse(await readBody(req))
        if (req.url === "/v1/embeddings") {
          fake.embeddings.push(body)
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
            object: "list",
            model: body.model,
            data: body.input.map((text: string, index: number) => ({ object: "embedding", index, embedding: Hashing.embed(text, dimensions) })),
            usage: { prompt_tokens: 1, total_tokens: 1 }
          }))
          return
        }
        if (req.url !== "/v1/chat/completions") {
          res.writeHead(404).end()
          return
        }
        const call: ChatCall = { headers: req.headers, body, closedEarly: false }
        fake.chats.push(call)
        const question = body.messages[body.messages.length - 1].content as string
        if (question.includes("STATUS500")) {
          res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "overloaded" } }))
          return
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        res.write(chunk({ role: "assistant", content: "" }))
        if (question.includes("SLOW")) {
          // One delta, then one every 200 ms for a minute, unless the assistant hangs up.
          let finished = false
          res.write(chunk({ content: "Starting " }))
          const timer = setInterval(() => res.write(chunk({ content: "more " })), 200)
          res.on("close", () => {
            clearInterval(timer)
            if (!finished) call.closedEarly = true
          })
          setTimeout(() => {
            finished = true
            clearInterval(timer)
            res.end(chunk({}, "stop") + "data: [DONE]\n\n")
          }, 60_000)
          return
        }
        if (question.includes("DROP")) {
          res.write(chunk({ content: "Half " }))
          res.write(chunk({ content: "an answer" }))
          setTimeout(() => res.socket?.destroy(), 50)
          return
        }
        if (question.includes("INSTREAM")) {
          res.write(chunk({ content: "Partial" }))
          res.end(`data: ${JSON.stringify({ error: { message: "model crashed", type: "server_error" } })}\n\n`)
          return
        }
        for (const word of answerWords) res.write(chunk({ content: word }))
        res.write(chunk({}, "stop"))
        res.write(`data: ${JSON.stringify({ id: "chatcmpl-test", object: "chat.completion.chunk", created: 1, model: "fake-chat", choices: [], usage: { prompt_tokens: 120, completion_tokens: 7, total_tokens: 127 } })}\n\n`)
        res.end("data: [DONE]\n\n")
      })
      return new Promise<{ server: http.Server; fake: Fake }>((resolve) =>
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({ server, fake: { ...fake, url: `http://127.0.0.1:${port}/v1` } })
        })
      )
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }))
  ).pipe(Effect.map(({ fake }) => fake))
)

const Live = Layer.unwrapEffect(
  Effect.map(FakeOpenAi, (fake) =>
    serviceLayer({
      env: {
        OPENAI_BASE_URL: fake.url,
        OPENAI_API_KEY: key,
        OPENAI_CHAT_MODEL: "fake-chat",
        OPENAI_EMBED_MODEL: "fake-embed",
        OPENAI_EMBED_DIMENSIONS: String(dimensions),
        ASSISTANT_MODEL_IDLE_TIMEOUT_SECONDS: "20"
      }
    }))
).pipe(Layer.provideMerge(FakeLive))

const note = "# Shared energy\n\nShared energy is, hour by hour, the minimum of the energy fed in and the energy withdrawn by the members.\n"

layer(Live, { excludeTestServices: true, timeout: "90 seconds" })("OpenAI-compatible server", (it) => {
  const setup = Effect.gen(function*() {
    const token = yield* Effect.flatMap(tokens, (mint) => mint("participant"))
    const url = yield* baseUrl
    const fake = yield* FakeOpenAi
    return { token, url, fake }
  })

  it.effect("embeds uploads and questions through /embeddings with the model, dimensions and key", () =>
    Effect.gen(function*() {
      const { fake, token } = yield* setup
      const uploaded = yield* call("POST", "/upload", { token, form: fileForm("note.md", note) })
      expect(uploaded.status).toBe(201)
      expect(fake.embeddings.length).toBeGreaterThan(0)
      expect(fake.embeddings[0]).toMatchObject({ model: "fake-embed", dimensions })
      expect(fake.embeddings[0].input[0]).toContain("Shared energy is, hour by hour")
    }))

  it.effect("relays the streamed chunks as token frames and sends the prompt the model needs", () =>
    Effect.gen(function*() {
      const { fake, token, url } = yield* setup
      const first = yield* chat(`${url}/api/chat`, token, { message: "How is shared energy computed?" })
      expect(first.status).toBe(200)
      expect(first.frames.map((f) => f.type)).toEqual(["meta", "sources", ...answerWords.map(() => "token"), "done"])
      expect(first.frames.filter((f) => f.type === "token").map((f) => f.data)).toEqual(answerWords)
      expect(first.events[first.events.length - 1].data).toBe("[DONE]")

      const sent = fake.chats[fake.chats.length - 1]
      expect(sent.headers.authorization).toBe(`Bearer ${key}`)
      expect(sent.body).toMatchObject({ model: "fake-chat", stream: true, temperature: 0.2 })
      expect(sent.body.messages[0]).toEqual({ role: "system", content: Prompt.systemText })
      const user = sent.body.messages[sent.body.messages.length - 1]
      expect(user.role).toBe("user")
      expect(user.content).toContain("Sources:\n[1] Shared energy\nShared energy is, hour by hour")
      expect(user.content.endsWith("Question: How is shared energy computed?")).toBe(true)

      // A second turn sends the first as history.
      const id = (first.frames[0].data as { conversation_id: string }).conversation_id
      yield* chat(`${url}/api/chat`, token, { message: "And who pays for it?", conversation_id: id })
      const followUp = fake.chats[fake.chats.length - 1].body.messages
      expect(followUp.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"])
      expect(followUp[1].content).toBe("How is shared energy computed?")
      expect(followUp[2].content).toBe(answerWords.join(""))

      const messages = yield* call("GET", `/conversations/${id}/messages`, { token })
      const stored = (messages.body as { messages: ReadonlyArray<{ role: string; content: string; status: string }> }).messages
      expect(stored[1]).toMatchObject({ role: "assistant", content: answerWords.join(""), status: "complete" })
    }))

  it.effect("a connection dropped mid-stream gives an error frame, done, [DONE], and a failed reply with what had come", () =>
    Effect.gen(function*() {
      const { fake, token, url } = yield* setup
      const reply = yield* chat(`${url}/api/chat`, token, { message: "Please DROP the connection" })
      expect(reply.status).toBe(200)
      const types = reply.frames.map((f) => f.type)
      expect(types).toEqual(["meta", "sources", "token", "token", "error", "done"])
      expect(reply.events[reply.events.length - 1].data).toBe("[DONE]")
      const error = reply.frames[4].data as { message: string }
      expect(error.message).toContain(`The language model at ${fake.url} failed`)
      expect(error.message).not.toContain(key)

      const id = (reply.frames[0].data as { conversation_id: string }).conversation_id
      const messages = yield* call("GET", `/conversations/${id}/messages`, { token })
      const stored = (messages.body as { messages: ReadonlyArray<{ role: string; content: string; status: string; error: string }> }).messages
      expect(stored[1]).toMatchObject({ role: "assistant", content: "Half an answer", status: "failed", error: error.message })
    }))

  it.effect("an error object in the stream and an error status are error frames too", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const inStream = yield* chat(`${url}/api/chat`, token, { message: "INSTREAM error please" })
      expect(inStream.frames.map((f) => f.type)).toEqual(["meta", "sources", "token", "error", "done"])
      expect((inStream.frames[3].data as { message: string }).message).toContain("model crashed")

      const status = yield* chat(`${url}/api/chat`, token, { message: "STATUS500 please" })
      expect(status.frames.map((f) => f.type)).toEqual(["meta", "sources", "error", "done"])
      expect((status.frames[2].data as { message: string }).message).toContain("answered HTTP 500")
    }))

  it.effect("a client that goes away stops the model call, and the partial reply is kept as interrupted", () =>
    Effect.gen(function*() {
      const { fake, token, url } = yield* setup
      const before = fake.chats.length
      const conversation = yield* Effect.promise(async () => {
        const controller = new AbortController()
        const response = await fetch(`${url}/api/chat`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ message: "Answer SLOW please" }),
          signal: controller.signal
        })
        const reader = response.body!.getReader()
        const decoder = new TextDecoder()
        let text = ""
        while (!text.includes("more ")) {
          const { value } = await reader.read()
          text += decoder.decode(value, { stream: true })
        }
        controller.abort()
        return (JSON.parse(text.split("\n")[0].slice("data: ".length)) as { data: { conversation_id: string } }).data.conversation_id
      })
      // The assistant hangs up on the model well before its answer would end (a minute).
      const modelCall = fake.chats[before]
      for (let i = 0; i < 50 && !modelCall.closedEarly; i++) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
      expect(modelCall.closedEarly).toBe(true)

      let stored: ReadonlyArray<{ role: string; content: string; status: string }> = []
      for (let i = 0; i < 50 && stored.length < 2; i++) {
        const messages = yield* call("GET", `/conversations/${conversation}/messages`, { token })
        stored = (messages.body as { messages: typeof stored }).messages
        if (stored.length < 2) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
      }
      expect(stored[1].status).toBe("interrupted")
      expect(stored[1].content.startsWith("Starting more ")).toBe(true)
    }))
})
