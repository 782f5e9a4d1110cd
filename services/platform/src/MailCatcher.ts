/**
 * A development mail catcher: an SMTP server (`smtp-server`) on the launcher's host that accepts
 * every message, logs who it was for and its subject, and keeps it as an `.eml` file under
 * `<data dir>/mail/`, so the nudging service's e-mail (alerts to a DSO's control room, for
 * example) can be read without a real mail server. It goes through the nudging service's own
 * SMTP transport, exactly as a real server would. Not started when `SMTP_HOST` names a server.
 */
import { Effect, Layer } from "effect"
import { simpleParser } from "mailparser"
import * as fs from "node:fs"
import * as path from "node:path"
import { SMTPServer } from "smtp-server"
import * as Hosts from "./Hosts.js"

export interface MailCatcherOptions {
  readonly host: string
  readonly port: number
  /** Where messages are kept. */
  readonly directory: string
}

export const directory = (dataDir: string): string => path.join(dataDir, "mail")

/** The nudging service's SMTP settings for the catcher (plain SMTP on the loopback interface). */
export const nudgingEnv = (host: string, port: number): Record<string, string> => ({
  SMTP_HOST: Hosts.forConnecting(host).replace(/^\[|\]$/g, ""),
  SMTP_PORT: String(port),
  SMTP_USE_TLS: "false",
  SMTP_USE_SSL: "false",
  EMAIL_FROM: "REC platform (development) <nudging@rec.example>"
})

/** `2026-11-26T00-41-03.123Z-1.eml`: sorts by arrival. */
const fileName = (count: number) => `${new Date().toISOString().replace(/:/g, "-")}-${count}.eml`

export const layer = (options: MailCatcherOptions): Layer.Layer<never, Error> =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      yield* Effect.sync(() => fs.mkdirSync(options.directory, { recursive: true }))
      const runtime = yield* Effect.runtime<never>()
      const log = (effect: Effect.Effect<void>) => Effect.runFork(effect.pipe(Effect.provide(runtime)))
      let count = 0
      const server = new SMTPServer({
        authOptional: true,
        disabledCommands: ["STARTTLS", "AUTH"],
        logger: false,
        // A pooled sender keeps its connection open: do not hold the launcher's stop for it.
        closeTimeout: 200,
        banner: "REC platform development mail catcher",
        onData(stream, session, callback) {
          const chunks: Array<Buffer> = []
          stream.on("data", (chunk: Buffer) => chunks.push(chunk))
          stream.on("end", () => {
            const raw = Buffer.concat(chunks)
            count += 1
            const file = path.join(options.directory, fileName(count))
            const to = session.envelope.rcptTo.map((r) => r.address).join(", ")
            fs.promises.writeFile(file, raw).then(
              () => simpleParser(raw).then((mail) => mail.subject ?? "(no subject)", () => "(unreadable)"),
              (error: Error) => Promise.reject(error)
            ).then(
              (subject) => {
                log(Effect.logInfo(`e-mail to ${to}: ${subject}`).pipe(Effect.annotateLogs({ file })))
                callback()
              },
              (error: Error) => callback(error)
            )
          })
        }
      })
      yield* Effect.acquireRelease(
        Effect.async<void, Error>((resume) => {
          const onError = (error: Error) => resume(Effect.fail(new Error(`the mail catcher cannot listen: ${error.message}`, { cause: error })))
          server.server.once("error", onError)
          server.listen(options.port, options.host, () => {
            server.server.off("error", onError)
            resume(Effect.void)
          })
        }),
        () =>
          Effect.async<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
      yield* Effect.logInfo(`mail catcher on ${Hosts.forConnecting(options.host)}:${options.port}, messages in ${options.directory}`)
    })
  )
