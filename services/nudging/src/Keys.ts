/**
 * The service's keys: the VAPID key pair web push is signed with and the secret of click
 * tokens. From the environment when set (`VAPID_PUBLIC_KEY`/`VAPID_PRIVATE_KEY`,
 * `CLICK_TRACKING_SECRET`); otherwise generated once and kept in the `settings` table, so every
 * instance on the database signs with the same key and browsers' subscriptions survive
 * restarts (the embedded default). Production should set them: the database then holds no
 * secret.
 *
 * `VAPID_PRIVATE_KEY` may be the raw key (base64url, 32 bytes, what `web-push generate-vapid-keys`
 * prints) or a PEM (with literal `\n` allowed, as the original stored it on one line); the public
 * key must be the private key's.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as crypto from "node:crypto"
import webpush from "web-push"
import { Settings } from "./Settings.js"

export interface VapidKeys {
  /** base64url of the 65-byte uncompressed P-256 point. */
  readonly publicKey: string
  /** base64url of the 32-byte private scalar. */
  readonly privateKey: Redacted.Redacted<string>
  readonly subject: string
  readonly source: "environment" | "database"
}

export class InvalidKeys extends Data.TaggedError("InvalidKeys")<{ readonly message: string }> {}

/** The raw private scalar and the public point of a VAPID private key given as raw or PEM. */
export const parsePrivateKey = (value: string): { readonly privateKey: string; readonly publicKey: string } | string => {
  const text = value.trim().replace(/\\n/g, "\n")
  if (!text.includes("-----BEGIN") && (!/^[A-Za-z0-9_-]+=*$/.test(text) || Buffer.from(text, "base64url").length !== 32)) {
    return "VAPID_PRIVATE_KEY cannot be read: expected base64url of 32 bytes (what web-push generate-vapid-keys prints), or a PEM"
  }
  try {
    const key = text.includes("-----BEGIN")
      ? crypto.createPrivateKey(text)
      : crypto.createPrivateKey({
        key: { kty: "EC", crv: "P-256", d: text, ...publicCoordinates(text) },
        format: "jwk"
      })
    const jwk = key.export({ format: "jwk" })
    if (jwk.kty !== "EC" || jwk.crv !== "P-256" || jwk.d === undefined || jwk.x === undefined || jwk.y === undefined) {
      return "VAPID_PRIVATE_KEY is not a P-256 (prime256v1) private key"
    }
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x, "base64url"), Buffer.from(jwk.y, "base64url")])
    return { privateKey: jwk.d, publicKey: point.toString("base64url") }
  } catch (cause) {
    return `VAPID_PRIVATE_KEY cannot be read (base64url of 32 bytes, or a PEM): ${cause instanceof Error ? cause.message : String(cause)}`
  }
}

/** x and y of the public point of a raw private scalar (JWK import needs them). */
const publicCoordinates = (d: string) => {
  const ecdh = crypto.createECDH("prime256v1")
  ecdh.setPrivateKey(Buffer.from(d, "base64url"))
  const point = ecdh.getPublicKey()
  return { x: point.subarray(1, 33).toString("base64url"), y: point.subarray(33).toString("base64url") }
}

export class Keys extends Effect.Service<Keys>()("nudging/Keys", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* Settings
    const clock = yield* Effect.clock

    /** The stored value of `key`, created by `make` when there is none (first writer wins). */
    const stored = <A>(key: string, make: () => A) =>
      Effect.gen(function*() {
        const now = new Date(yield* clock.currentTimeMillis).toISOString()
        yield* sql`INSERT INTO settings (key, value, created_at) VALUES (${key}, ${JSON.stringify(make())}::jsonb, ${now})
          ON CONFLICT (key) DO NOTHING`
        const rows = yield* sql<{ value: A }>`SELECT value FROM settings WHERE key = ${key}`
        return rows[0]!.value
      })

    const vapid: VapidKeys = yield* Effect.gen(function*() {
      const { privateKey, publicKey, subject } = settings.vapid
      if (Option.isSome(privateKey) && Option.isSome(publicKey)) {
        const parsed = parsePrivateKey(Redacted.value(privateKey.value))
        if (typeof parsed === "string") return yield* new InvalidKeys({ message: parsed })
        if (parsed.publicKey !== publicKey.value.trim().replace(/=+$/, "")) {
          return yield* new InvalidKeys({ message: "VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY" })
        }
        return { publicKey: parsed.publicKey, privateKey: Redacted.make(parsed.privateKey), subject, source: "environment" as const }
      }
      const generated = yield* stored("vapid", () => webpush.generateVAPIDKeys())
      return {
        publicKey: generated.publicKey,
        privateKey: Redacted.make(generated.privateKey),
        subject,
        source: "database" as const
      }
    })

    const clickSecret: Redacted.Redacted<string> = Option.isSome(settings.clickSecret)
      ? Redacted.make(Redacted.value(settings.clickSecret.value))
      : Redacted.make(yield* stored("click_tracking_secret", () => crypto.randomBytes(32).toString("base64url")))

    yield* Effect.logInfo(`VAPID key pair from the ${vapid.source}`)
    return { vapid, clickSecret }
  })
}) {}
