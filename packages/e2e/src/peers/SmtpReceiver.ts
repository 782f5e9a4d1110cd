/** An SMTP server (`smtp-server`, no TLS, no auth) keeping the parsed messages (`mailparser`). */
import { type ParsedMail, simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

export interface SmtpReceiver {
  readonly port: number
  readonly messages: Array<ParsedMail>
  readonly close: () => Promise<void>
}

export const start = (): Promise<SmtpReceiver> =>
  new Promise((resolve) => {
    const messages: Array<ParsedMail> = []
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData(stream, _session, callback) {
        simpleParser(stream).then(
          (mail) => {
            messages.push(mail)
            callback()
          },
          (error: Error) => callback(error)
        )
      }
    })
    server.listen(0, "127.0.0.1", () => {
      resolve({
        port: (server.server.address() as AddressInfo).port,
        messages,
        close: () => new Promise((done) => server.close(() => done()))
      })
    })
  })
