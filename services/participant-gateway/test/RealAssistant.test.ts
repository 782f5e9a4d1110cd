/**
 * The assistant proxy against the assistant itself (`@rec/assistant-service`'s `Http.makeTest`:
 * its database, file storage, policies and the offline answerer), which verifies the user's token
 * the gateway forwards: an upload through the proxy (multipart, streamed), a chat about it streamed
 * back frame by frame as the assistant frames it, the user's conversations (query strings kept),
 * another user's conversation a 404, the assistant's own refusals passed through, and a path that
 * tries to leave `/api/` refused before anything is sent.
 */
import type * as HttpServer from "@effect/platform/HttpServer"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { expect, layer } from "@effect/vitest"
import { Http as AssistantHttp, migrations as assistantMigrations } from "@rec/assistant-service"
import * as Storage from "@rec/assistant-service/Storage"
import { Testing } from "@rec/db"
import { Engines } from "@rec/policy"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { servedUrl } from "./support/Fakes.js"
import { baseUrl, call, gatewayLayer, rawRequest, repoPolicies, token, verifierFor } from "./support/Harness.js"

let assistantUrl = ""

const gateway = gatewayLayer((idp) =>
  Effect.gen(function*() {
    const storageDir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "gateway-assistant-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const assistant = AssistantHttp.makeTest({
      database: Testing.layerPglite({ service: "assistant", migrations: assistantMigrations }),
      verifier: verifierFor(idp.issuer),
      engine: Engines.embeddedWith({ directory: repoPolicies, watch: false }),
      storage: Storage.folder(storageDir).pipe(Layer.provide(NodeContext.layer))
    }).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["LOG_LEVEL", "warn"]])))))
    assistantUrl = yield* servedUrl(assistant as Layer.Layer<HttpServer.HttpServer, unknown>)
    return { env: { ASSISTANT_URL: assistantUrl } }
  })
)

interface Streamed {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly chunks: ReadonlyArray<string>
}

const chat = (base: string, t: string, body: unknown) =>
  Effect.async<Streamed>((resume) => {
    const url = new URL(base)
    const request = http.request({
      host: url.hostname,
      port: url.port,
      method: "POST",
      path: "/api/assistant/chat",
      headers: { "x-auth-request-access-token": t, "content-type": "application/json", accept: "text/event-stream" }
    }, (response) => {
      const chunks: Array<string> = []
      response.setEncoding("utf8")
      response.on("data", (text: string) => chunks.push(text))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, chunks })))
    })
    request.on("error", (e) => resume(Effect.die(e)))
    request.end(JSON.stringify(body))
  })

type Frame = "[DONE]" | { readonly type: string; readonly data: unknown }

const framesOf = (text: string): Array<Frame> =>
  text.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6)).map((d) =>
    d === "[DONE]" ? "[DONE]" : (JSON.parse(d) as { type: string; data: unknown })
  )

const document = "# Shared energy\n\nShared energy is the minimum, hour by hour, of the energy the members of a " +
  "renewable energy community feed into the grid and the energy they take from it. The incentive is paid on it.\n"

layer(gateway, { excludeTestServices: true, timeout: "120 seconds" })("with the assistant", (it) => {
  it.effect("an upload, a chat about it streamed back as the assistant frames it, the conversation listed and deleted", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const t = yield* token("participant")
      const boundary = "----gateway-test-boundary"
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="shared.md"\r\n` +
        `Content-Type: text/markdown\r\n\r\n${document}\r\n--${boundary}--\r\n`
      const upload = yield* rawRequest(base, "POST", "/api/assistant/upload", {
        "x-auth-request-access-token": t,
        "content-type": `multipart/form-data; boundary=${boundary}`,
        "content-length": String(Buffer.byteLength(body))
      }, body)
      expect(upload.status).toBe(201)
      expect(upload.body).toMatchObject({ filename: "shared.md", scope: "user" })

      const reply = yield* chat(base, t, { message: "What is shared energy?" })
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toMatch(/^text\/event-stream/)
      expect(reply.headers["x-accel-buffering"]).toBe("no")
      const frames = framesOf(reply.chunks.join(""))
      expect(frames.at(-1)).toBe("[DONE]")
      const typed = frames.filter((f): f is Exclude<Frame, "[DONE]"> => f !== "[DONE]")
      expect(typed[0]!.type).toBe("meta")
      expect(typed.at(-1)!.type).toBe("done")
      const answer = typed.filter((f) => f.type === "token").map((f) => f.data as string).join("")
      expect(answer.toLowerCase()).toContain("shared energy")
      const conversationId = (typed[0]!.data as { conversation_id: string }).conversation_id

      // The same listing through the gateway and from the assistant directly; the query string kept.
      const listed = yield* call("GET", "/api/assistant/conversations?limit=1", { token: t })
      expect(listed.status).toBe(200)
      const page = listed.body as { items: Array<{ id?: string; conversation_id?: string }>; limit: number }
      expect(page.limit).toBe(1)
      expect(JSON.stringify(page.items)).toContain(conversationId)
      const directly = yield* Effect.promise(() =>
        fetch(`${assistantUrl}/api/conversations?limit=1`, { headers: { authorization: `Bearer ${t}` } }).then((r) => r.json())
      )
      expect(listed.body).toEqual(directly)
      expect((yield* call("GET", `/api/assistant/conversations/${conversationId}/messages`, { token: t })).status).toBe(200)

      // Another user's conversation is the assistant's 404, passed through.
      const luca = yield* token("participant-consumer")
      expect((yield* call("GET", `/api/assistant/conversations/${conversationId}/messages`, { token: luca })).status).toBe(404)
      expect((yield* call("DELETE", `/api/assistant/conversations/${conversationId}`, { token: luca })).status).toBe(404)
      expect((yield* call("DELETE", `/api/assistant/conversations/${conversationId}`, { token: t })).status).toBe(200)
      expect((yield* call("GET", `/api/assistant/conversations/${conversationId}/messages`, { token: t })).status).toBe(404)
    }))

  it.effect("the assistant's refusals pass through; an escaping path never reaches it", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const t = yield* token("participant")
      // Administration is the assistant's to refuse for a participant.
      const admin = yield* call("POST", "/api/assistant/admin/reload", { token: t })
      expect(admin.status).toBe(403)
      expect(admin.body).toHaveProperty("detail")
      const empty = yield* rawRequest(base, "POST", "/api/assistant/chat", {
        "x-auth-request-access-token": t,
        "content-type": "application/json"
      }, JSON.stringify({ message: "" }))
      expect(empty.status).toBe(400)
      const escaped = yield* rawRequest(base, "POST", "/api/assistant/%2e%2e/admin/reload", { "x-auth-request-access-token": t })
      expect(escaped.status).toBe(400)
      expect((escaped.body as { detail: string }).detail).toBe("The assistant path may not contain . or .. segments")
      const user = yield* call("GET", "/api/assistant/user", { token: t })
      expect(user.status).toBe(200)
      expect(JSON.stringify(user.body)).toContain("52409e36-6d23-45ed-bb1e-d6c564a2f454")
    }))
})
