/**
 * An SMTP server for the tests (`smtp-server`, random port of 127.0.0.1, no TLS): real mail in,
 * parsed with `mailparser`. Recipients starting with `reject` are refused with 550, ones
 * starting with `busy` with 451 (a temporary failure).
 */
import * as Effect from "effect/Effect"
import { type ParsedMail, simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

export interface MailServer {
  readonly port: number
  readonly messages: Array<ParsedMail>
  readonly waitFor: (count: number, timeoutMs?: number) => Promise<ReadonlyArray<ParsedMail>>
}

const refusal = (message: string, responseCode: number) => Object.assign(new Error(message), { responseCode })

export const make = Effect.acquireRelease(
  Effect.async<MailServer & { readonly server: SMTPServer }>((resume) => {
    const messages: Array<ParsedMail> = []
    const waiters: Array<() => void> = []
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith("reject")) return callback(refusal("Mailbox unavailable", 550))
        if (address.address.startsWith("busy")) return callback(refusal("Try again later", 451))
        callback()
      },
      onData(stream, _session, callback) {
        simpleParser(stream).then(
          (mail) => {
            messages.push(mail)
            for (const wake of waiters.splice(0)) wake()
            callback()
          },
          (error: Error) => callback(error)
        )
      }
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.server.address() as AddressInfo).port
      resume(Effect.succeed({
        server,
        port,
        messages,
        waitFor: (count, timeoutMs = 10_000) =>
          new Promise((resolve, reject) => {
            const deadline = setTimeout(() => reject(new Error(`expected ${count} e-mails, received ${messages.length}`)), timeoutMs)
            const check = () => {
              if (messages.length >= count) {
                clearTimeout(deadline)
                resolve(messages.slice())
              } else waiters.push(check)
            }
            check()
          })
      }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)
