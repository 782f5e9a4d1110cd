import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { answerOf, baseUrl, call, chat, fileForm, serviceLayer, tokens } from "./helpers.js"

layer(serviceLayer({ logs: true }), { excludeTestServices: true, timeout: "60 seconds" })("smoke", (it) => {
  it.effect("uploads and chats", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("participant"))
      const url = yield* baseUrl
      const up = yield* call("POST", "/upload", {
        token,
        form: fileForm("notes.md", "# Shared energy\n\nShared energy is the minimum, hour by hour, of the energy fed into the grid and the energy withdrawn by the members.\n\n## Incentive\n\nThe incentive is paid by the GSE for 20 years.")
      })
      console.log(up.status, up.body)
      const health = yield* call("GET", "/api/health")
      console.log(health.status, health.body)
      const reply = yield* chat(`${url}/api/chat`, token, { message: "What is shared energy?" })
      console.log(reply.status, reply.headers, reply.frames.slice(0, 3), answerOf(reply))
      expect(reply.status).toBe(200)
    }))
})
