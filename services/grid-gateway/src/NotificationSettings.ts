/**
 * The caller's alert delivery settings (`/api/notification-settings`): default recipients of
 * their rules and a webhook. Reading never writes (the original created an empty row on GET);
 * an update changes only the fields it names. A webhook URL is checked when it is set
 * (`WebhookUrls`, 422 saying why); a new URL, or `rotate_webhook_secret`, gets a new signing
 * secret, answered in that response only.
 */
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as GridConfig from "./Config.js"
import type * as Domain from "./Domain.js"
import { GridAccess } from "./GridAccess.js"
import { NotificationSettingsRepo, type SettingsRow } from "./NotificationSettingsRepo.js"
import * as Webhooks from "./Webhooks.js"
import * as WebhookUrls from "./WebhookUrls.js"

const toApi = (row: SettingsRow, secret?: string): Domain.NotificationSettings => ({
  user_id: row.userId,
  email_recipients: row.emailRecipients,
  webhook_url: row.webhookUrl,
  ...(secret === undefined ? {} : { webhook_secret: secret }),
  updated_at: row.updatedAt
})

const refused = (field: string, message: string) =>
  new HttpErrors.UnprocessableEntity({ detail: `${field} ${message}`, issues: [{ path: [field], message }] })

export class NotificationSettings extends Effect.Service<NotificationSettings>()(
  "@rec/grid-gateway/NotificationSettings",
  {
    effect: Effect.gen(function*() {
      const repo = yield* NotificationSettingsRepo
      const access = yield* GridAccess
      const { webhooks } = yield* GridConfig.settings
      const lookup = yield* WebhookUrls.Resolver

      const get = Effect.fn("NotificationSettings.get")(function*() {
        const subject = yield* access.check("alerts.read")
        const row = yield* Effect.orDie(repo.find(subject.id))
        return Option.match(row, {
          onNone: (): Domain.NotificationSettings => ({
            user_id: subject.id,
            email_recipients: null,
            webhook_url: null,
            updated_at: null
          }),
          onSome: (r) => toApi(r)
        })
      })

      const put = Effect.fn("NotificationSettings.put")(function*(body: Domain.NotificationSettingsUpdate) {
        const subject = yield* access.check("alerts.write")
        // Checked (with DNS) before the transaction: nothing outside the database inside it.
        const url = body.webhook_url === undefined || body.webhook_url === null
          ? body.webhook_url
          : yield* WebhookUrls.resolveTarget(body.webhook_url, webhooks, lookup).pipe(
            Effect.map((target) => target.url.href),
            Effect.mapError((reason) => refused("webhook_url", reason))
          )
        const { result: secret, row } = yield* repo.modify(subject.id, (current) => {
          const was = Option.getOrUndefined(current)
          const emailRecipients = body.email_recipients === undefined
            ? was?.emailRecipients ?? null
            : body.email_recipients === null || body.email_recipients.length === 0
            ? null
            : body.email_recipients
          const webhookUrl = url === undefined ? was?.webhookUrl ?? null : url
          if (webhookUrl === null) {
            return body.rotate_webhook_secret === true
              ? Effect.fail(refused("rotate_webhook_secret", "needs a webhook_url: there is no webhook to sign for"))
              : Effect.succeed({ values: { emailRecipients, webhookUrl: null, webhookSecret: null }, result: undefined })
          }
          const keep = webhookUrl === was?.webhookUrl && was.webhookSecret !== null && body.rotate_webhook_secret !== true
          const fresh = keep ? undefined : Webhooks.newSecret()
          return Effect.succeed({
            values: { emailRecipients, webhookUrl, webhookSecret: fresh ?? was?.webhookSecret ?? null },
            result: fresh
          })
        }).pipe(Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die, NoSuchElementException: Effect.die }))
        return toApi(row, secret)
      })

      return { get, put } as const
    })
  }
) {}
