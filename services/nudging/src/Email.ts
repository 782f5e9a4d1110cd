/**
 * E-mail over SMTP with `nodemailer` (`SMTP_*`, `EMAIL_FROM`): one pooled transport per
 * instance. Answers are classified as for web push: accepted; 4xx replies, connection failures
 * and timeouts are retried; 5xx replies (an unknown mailbox, a refused sender) are final.
 * Without `SMTP_HOST` every e-mail delivery fails at once, saying so.
 */
import * as Effect from "effect/Effect"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import nodemailer from "nodemailer"
import { Settings } from "./Settings.js"

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly language: string
}

export type MailResult =
  | { readonly _tag: "Delivered"; readonly messageId: string }
  | { readonly _tag: "Retry"; readonly message: string }
  | { readonly _tag: "Rejected"; readonly message: string }

interface SmtpError {
  readonly responseCode?: number
  readonly code?: string
  readonly message?: string
}

export class Email extends Effect.Service<Email>()("nudging/Email", {
  scoped: Effect.gen(function*() {
    const settings = yield* Settings
    if (Option.isNone(settings.smtp)) {
      return {
        configured: false,
        send: (_mail: Mail): Effect.Effect<MailResult> =>
          Effect.succeed({ _tag: "Rejected", message: "e-mail is not configured (SMTP_HOST is not set)" })
      }
    }
    const smtp = settings.smtp.value
    const timeout = Duration.toMillis(smtp.timeout)
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        nodemailer.createTransport({
          host: smtp.host,
          port: smtp.port,
          secure: smtp.implicitTls,
          requireTLS: smtp.startTls && !smtp.implicitTls,
          ignoreTLS: !smtp.startTls && !smtp.implicitTls,
          pool: true,
          maxConnections: 3,
          connectionTimeout: timeout,
          greetingTimeout: timeout,
          socketTimeout: timeout,
          ...(Option.isSome(smtp.username)
            ? { auth: { user: smtp.username.value, pass: Option.match(smtp.password, { onNone: () => "", onSome: Redacted.value }) } }
            : {})
        })
      ),
      (t) => Effect.sync(() => t.close())
    )

    const send = (mail: Mail): Effect.Effect<MailResult> =>
      Effect.tryPromise({
        try: () =>
          transport.sendMail({
            from: smtp.from,
            to: mail.to,
            subject: mail.subject,
            text: mail.text,
            headers: { "Content-Language": mail.language }
          }),
        catch: (cause) => cause as SmtpError
      }).pipe(
        Effect.map((info): MailResult => ({ _tag: "Delivered", messageId: String(info.messageId ?? "") })),
        Effect.catchAll((error): Effect.Effect<MailResult> => {
          const code = error.responseCode
          const message = `SMTP ${code ?? error.code ?? "error"}: ${String(error.message ?? error).slice(0, 300)}`
          return Effect.succeed(code !== undefined && code >= 500 ? { _tag: "Rejected", message } : { _tag: "Retry", message })
        }),
        Effect.withSpan("Email.send")
      )

    return { configured: true, send }
  })
}) {}
