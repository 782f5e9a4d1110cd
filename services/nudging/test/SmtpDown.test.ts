/**
 * SMTP down (issue 19 point 2): the service's SMTP port has nothing behind it at first. An
 * ingest still answers 200 with its delivery ids (the status table: e-mail goes out in the
 * background), the deliveries stay pending and are retried with backoff, each attempt recording
 * the connection error; when the mail server comes back on that port every e-mail arrives once.
 * Nothing is lost, nothing is sent twice. Prints `FIGURE smtp-down: ...`.
 */
import { expect, layer } from "@effect/vitest"
import type { Domain } from "@rec/nudging-service"
import * as Effect from "effect/Effect"
import * as net from "node:net"
import { call, ingest, Mail, serviceLayer, token } from "./support/Service.js"

/** The port the service sends e-mail to; nothing listens there until the test forwards it. */
const smtpPort = await new Promise<number>((resolve) => {
  const probe = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as net.AddressInfo
    probe.close(() => resolve(port))
  })
})

/** Forwards `smtpPort` to the test's mail server: SMTP "comes back". */
const forwardTo = (target: number) =>
  Effect.acquireRelease(
    Effect.async<net.Server>((resume) => {
      const server = net.createServer((incoming) => {
        const upstream = net.connect(target, "127.0.0.1")
        for (const s of [incoming, upstream]) s.on("error", () => s.destroy())
        incoming.pipe(upstream).pipe(incoming)
      })
      server.listen(smtpPort, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )

const notification = (id: string) =>
  Effect.flatMap(token("svc-nudging"), (t) => call("GET", `/notifications/${id}`, { token: t })).pipe(
    Effect.map((reply) => reply.body as Domain.Notification)
  )

const until = (id: string, done: (n: Domain.Notification) => boolean, timeoutMs = 30_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (true) {
      const n = yield* notification(id)
      if (done(n)) return n
      if (Date.now() > deadline) return yield* Effect.dieMessage(`notification ${id} did not settle: ${JSON.stringify(n)}`)
      yield* Effect.sleep("100 millis")
    }
  })

const env = {
  SMTP_PORT: String(smtpPort),
  // Enough attempts to outlast the outage (backoff 0.2 s doubling to 1 s).
  NUDGING_DELIVERY_MAX_ATTEMPTS: "30"
}

layer(serviceLayer({ env }), { excludeTestServices: true, timeout: "120 seconds" })("SMTP down", (it) => {
  it.scoped("ingest answers 200, e-mails wait and are retried, and all arrive once SMTP is back", () =>
    Effect.gen(function*() {
      const mail = yield* Mail
      const recipients = ["ops@smtp-down.example", "duty@smtp-down.example", "dso@smtp-down.example"]
      const reply = yield* ingest({
        event_type: "extr_event",
        facts: {
          facts_version: "1.0",
          scenario: "extr_event",
          period: "2026-08-03",
          window_start: "10:00",
          window_end: "12:00",
          event_type: "wind",
          email_recipients: recipients
        }
      })
      expect(reply.status).toBe(200)
      const outcome = (reply.body as Domain.IngestDispatched).outcomes[0]!
      expect(outcome.delivery_ids).toHaveLength(3)
      const id = outcome.notification_id!

      // Down: every delivery retried at least twice, pending, with the connection error.
      const waiting = yield* until(id, (n) => n.deliveries.every((d) => d.attempts >= 2))
      for (const d of waiting.deliveries) {
        // Between attempts it is pending; read during the next attempt it is sending.
        expect(["pending", "sending"]).toContain(d.status)
        expect(d.error).toMatch(/ECONNREFUSED|connect/i)
      }
      const attemptsWhileDown = waiting.deliveries.reduce((sum, d) => sum + d.attempts, 0)

      const backAt = Date.now()
      yield* forwardTo(mail.port)
      const done = yield* until(id, (n) => n.deliveries.every((d) => d.status === "dispatched"))
      const deliveredAfterMs = Date.now() - backAt
      yield* Effect.promise(() => mail.waitFor(3))
      yield* Effect.sleep("500 millis")
      const received = mail.messages.flatMap((m) => (Array.isArray(m.to) ? m.to : m.to === undefined ? [] : [m.to]))
        .flatMap((a) => a.value.map((v) => v.address ?? ""))
        .filter((a) => a.endsWith("@smtp-down.example"))
      console.log(
        `FIGURE smtp-down: deliveries=3 attempts_while_down=${attemptsWhileDown} ` +
          `delivered_after_smtp_back_ms=${deliveredAfterMs} emails_received=${received.length} final_status=${done.status}`
      )
      expect(received.sort()).toEqual([...recipients].sort())
      expect(done.deliveries.every((d) => d.error === null)).toBe(true)
    }), 120_000)
})
