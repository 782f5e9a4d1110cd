/**
 * Server-side request forgery through the URLs users give (issue 19 point 3):
 *
 * - the grid gateway's webhook URL (notification settings): every address that is not public,
 *   however it is written, is a 422 saying why, and nothing is stored;
 * - the assistant's training-materials repository: the repository comes from the environment
 *   only (`TRAINING_MATERIALS_REPO`), the request chooses a ref, which must look like one: URLs,
 *   git options and remote helpers (`ext::`) are a 400 before git runs.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { detailOf, request } from "./support/Http.js"
import { Stack } from "./support/Stack.js"
import type { It } from "./support/Types.js"

export interface SsrfOutcome {
  readonly service: string
  readonly input: string
  readonly status: number
  readonly detail: string | undefined
}

export const ssrfOutcomes: Array<SsrfOutcome> = []

export const webhookAttempts: ReadonlyArray<string> = [
  "https://127.0.0.1/hook",
  "https://127.1/hook",
  "https://2130706433/hook",
  "https://0x7f000001/hook",
  "https://017700000001/hook",
  "https://0177.0.0.1/hook",
  "https://localhost/hook",
  "https://localhost./hook",
  "https://169.254.169.254/latest/meta-data/",
  "https://[fe80::1]/hook",
  "https://10.0.0.1/hook",
  "https://172.16.0.1/hook",
  "https://192.168.1.1/hook",
  "https://100.64.0.1/hook",
  "https://0.0.0.0/hook",
  "https://[::1]/hook",
  "https://[::ffff:127.0.0.1]/hook",
  "https://[::ffff:a9fe:a9fe]/hook",
  "https://[64:ff9b::a9fe:a9fe]/hook",
  "https://[2002:7f00:1::]/hook",
  "https://[fd00::1]/hook",
  "http://hooks.example.com/grid",
  "https://user:secret@hooks.example.com/grid",
  "file:///etc/passwd",
  "gopher://127.0.0.1:25/_HELO",
  "ftp://hooks.example.com/",
  "not a url"
]

export const refAttempts: ReadonlyArray<string> = [
  "http://169.254.169.254/latest/meta-data/",
  "https://127.0.0.1/repo.git",
  "--upload-pack=touch /tmp/hardening-pwned",
  "-c core.sshCommand=touch /tmp/hardening-pwned",
  "ext::sh -c touch% /tmp/hardening-pwned",
  "file:///etc/passwd",
  "main; curl http://169.254.169.254",
  "$(curl 169.254.169.254)"
]

export const ssrfTests = (it: It) => {
  it.effect("grid gateway: a webhook URL to loopback, link-local, private ranges or any encoding of them is a 422, not stored", () =>
    Effect.gen(function*() {
      const { idp, urls } = yield* Stack
      const base = urls["grid-gateway"]
      const token = yield* Effect.orDie(idp.mint("dso-operator-valsugana", { client: "rec-frontend" }))
      const before = yield* Effect.promise(() => request("GET", `${base}/api/notification-settings`, { token }))
      for (const url of webhookAttempts) {
        const reply = yield* Effect.promise(() => request("PUT", `${base}/api/notification-settings`, { token, json: { webhook_url: url } }))
        ssrfOutcomes.push({ service: "grid-gateway", input: url, status: reply.status, detail: detailOf(reply.body) })
        expect(reply.status, `${url}: ${reply.text.slice(0, 200)}`).toBe(422)
        expect(detailOf(reply.body), url).toBeDefined()
      }
      const after = yield* Effect.promise(() => request("GET", `${base}/api/notification-settings`, { token }))
      expect((after.body as { webhook_url: unknown }).webhook_url).toBeNull()
      expect(after.body).toEqual(before.body)
    }), 60_000)

  it.effect("assistant: a training-materials sync cannot be pointed anywhere: URLs, options and remote helpers as ref are a 400", () =>
    Effect.gen(function*() {
      const { idp, urls } = yield* Stack
      const token = yield* Effect.orDie(idp.mint("admin", { client: "rec-frontend" }))
      for (const ref of refAttempts) {
        const reply = yield* Effect.promise(() =>
          request("POST", `${urls.assistant}/admin/training-materials/sync`, { token, json: { target_ref: ref } })
        )
        ssrfOutcomes.push({ service: "assistant", input: `target_ref ${ref}`, status: reply.status, detail: detailOf(reply.body) })
        expect(reply.status, `${ref}: ${reply.text.slice(0, 200)}`).toBe(400)
        expect(detailOf(reply.body), ref).toBeDefined()
      }
      // A repository URL in the body is not part of the contract: ignored, the configured repository is synced.
      const other = yield* Effect.promise(() =>
        request("POST", `${urls.assistant}/admin/training-materials/sync`, { token, json: { repository: "https://169.254.169.254/x.git" } })
      )
      ssrfOutcomes.push({ service: "assistant", input: "repository URL in the body", status: other.status, detail: detailOf(other.body) })
      expect(other.status, other.text.slice(0, 300)).toBe(200)
      const synced = other.body as { git: { repository: string } }
      expect(synced.git.repository).not.toContain("169.254")
      expect(synced.git.repository).toMatch(/training-materials$/)
    }), 60_000)
}
