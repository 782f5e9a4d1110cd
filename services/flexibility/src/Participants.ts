/**
 * What the digital twin knows of a participant, read with the participant's own token (the
 * original forwarded the user's JWT too, reference A2): their community (profile), their meter
 * (the first asset with a sensor id) and their open flexibility windows.
 *
 * A participant the digital twin does not know (404) is "no data", not a failure; any other
 * failure of the digital twin is an `UpstreamFailure` naming it (502, 504, ...), never an
 * empty answer.
 */
import { DigitalTwinClient, type DigitalTwinError, type EnergySchemas } from "@rec/digital-twin"
import { Upstream } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

const upstreamName = "digital twin"

/** A `DigitalTwinError` as the platform's upstream failure (statuses per `Upstream`). */
export const fromDigitalTwin = (error: DigitalTwinError): Upstream.UpstreamFailure => {
  const make = (status: number, detail: string) =>
    new Upstream.UpstreamFailure({ upstream: upstreamName, operation: error.operation, status, detail, cause: error })
  switch (error.status) {
    case 503:
      return make(503, `Digital twin unavailable for ${error.operation}: ${error.message}`)
    case 504:
      return make(504, `Digital twin did not answer ${error.operation}: ${error.message}`)
    default:
      return error.status < 500
        ? Upstream.answered(upstreamName, error.operation, error.status, error.message)
        : make(502, `Digital twin failed ${error.operation}: ${error.message}`)
  }
}

/** `None` for a 404 (the digital twin has no such participant or device): no data. */
const noDataOn404 = <A>(effect: Effect.Effect<A, DigitalTwinError>) =>
  effect.pipe(
    Effect.map(Option.some),
    Effect.catchIf((e) => e.status === 404, () => Effect.succeedNone),
    Effect.mapError(fromDigitalTwin)
  )

type FlexibilityWindow = typeof EnergySchemas.FlexibilityWindow.Type

export interface Participant {
  readonly communityId: string | null
  /** Sensor ids of the participant's assets, the meter first. */
  readonly devices: ReadonlyArray<string>
}

export class Participants extends Effect.Service<Participants>()("flexibility/Participants", {
  effect: Effect.gen(function*() {
    const dt = yield* DigitalTwinClient

    /** The participant's meter (first asset with a sensor id), `None` when there is none. */
    const meter = Effect.fn("Participants.meter")(function*(sub: string, token: Redacted.Redacted) {
      const assets = yield* noDataOn404(dt.withToken(token).participants.assets(sub))
      return Option.flatMap(assets, (list) => Option.fromNullable(list.items.find((a) => !!a.sensor_id)?.sensor_id ?? undefined))
    })

    /** Community and devices, `None` when the digital twin does not know the participant. */
    const participant = Effect.fn("Participants.participant")(function*(sub: string, token: Redacted.Redacted) {
      const twin = dt.withToken(token).participants
      const [profile, assets] = yield* Effect.all([noDataOn404(twin.profile(sub)), noDataOn404(twin.assets(sub))], {
        concurrency: 2
      })
      if (Option.isNone(profile)) return Option.none<Participant>()
      const devices = Option.match(assets, {
        onNone: () => [],
        onSome: (list) => list.items.flatMap((a) => (a.sensor_id ? [a.sensor_id] : []))
      })
      return Option.some<Participant>({ communityId: profile.value.membership?.community.key ?? null, devices })
    })

    /** The open flexibility windows of a device, best first; empty when there are none. */
    const windows = Effect.fn("Participants.windows")(function*(sub: string, device: string, token: Redacted.Redacted) {
      const result = yield* noDataOn404(dt.withToken(token).participants.flexibilityWindows(sub, { device_id: device }))
      return Option.match(result, { onNone: (): ReadonlyArray<FlexibilityWindow> => [], onSome: (r) => r.items })
    })

    return { meter, participant, windows } as const
  })
}) {}
