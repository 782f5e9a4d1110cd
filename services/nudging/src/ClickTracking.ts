/**
 * Click tokens: `base64url(JSON {"notification_id": id}) "." base64url(HMAC-SHA256(secret, first part))`,
 * the original's format. They travel in the push payload (`data.click_token`) and in e-mail
 * links (`/track/click?token=`); the signature is what lets an unauthenticated request record a
 * click: only this service can make a token for a notification. Compared in constant time.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as crypto from "node:crypto"
import { Keys } from "./Keys.js"

export class InvalidToken extends Data.TaggedError("InvalidToken")<{ readonly reason: string }> {}

const mac = (secret: string, payload: string) => crypto.createHmac("sha256", secret).update(payload).digest()

export const sign = (secret: string, notificationId: string): string => {
  const payload = Buffer.from(JSON.stringify({ notification_id: notificationId })).toString("base64url")
  return `${payload}.${mac(secret, payload).toString("base64url")}`
}

/** The notification id of a token this secret signed. */
export const verify = (secret: string, token: string): Either.Either<string, InvalidToken> => {
  const parts = token.split(".")
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") {
    return Either.left(new InvalidToken({ reason: "The click token is malformed (expected two base64url parts separated by a dot)" }))
  }
  const [payload, signature] = parts as [string, string]
  const expected = mac(secret, payload)
  const given = Buffer.from(signature, "base64url")
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    return Either.left(new InvalidToken({ reason: "The click token's signature is not valid" }))
  }
  let body: unknown
  try {
    body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
  } catch {
    return Either.left(new InvalidToken({ reason: "The click token's payload is not JSON" }))
  }
  const id = typeof body === "object" && body !== null ? (body as Record<string, unknown>)["notification_id"] : undefined
  return typeof id === "string" && id !== ""
    ? Either.right(id)
    : Either.left(new InvalidToken({ reason: "The click token names no notification" }))
}

export class ClickTracking extends Effect.Service<ClickTracking>()("nudging/ClickTracking", {
  effect: Effect.map(Keys, (keys) => {
    const secret = Redacted.value(keys.clickSecret)
    return {
      sign: (notificationId: string) => sign(secret, notificationId),
      verify: (token: string) => verify(secret, token)
    }
  })
}) {}
