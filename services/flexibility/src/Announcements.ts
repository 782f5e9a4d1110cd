/**
 * The announcements of new commitments on `rec/flexibility/committed/{user_id}` (reference A3
 * step 4), handed to the MQTT client in batches (`Batches`): a commitment's announcement waits a
 * moment (`announceBatchLinger`) for the others of that moment and they are published together
 * (`Mqtt.publishJsonMany`: one span and one wait instead of a fiber, a span and a timer each; see
 * docs/performance.md, "Flexibility service"). Still one QoS 1 message per commitment, in the
 * order they were made; one that cannot go is logged, as before.
 */
import * as Effect from "effect/Effect"
import * as Batches from "./Batches.js"
import { CommittedEvents } from "./CommittedEvents.js"
import * as Config from "./Config.js"
import type { Commitment } from "./Domain.js"

export class Announcements extends Effect.Service<Announcements>()("flexibility/Announcements", {
  scoped: Effect.gen(function*() {
    const events = yield* CommittedEvents
    const { announceBatchSize, announceBatchLinger } = yield* Config.settings

    const send = (batch: ReadonlyArray<Commitment>) =>
      Effect.flatMap(events.publishMany(batch), (results) =>
        Effect.forEach(results, (failure, i) =>
          failure === undefined
            ? Effect.void
            : Effect.logWarning(`commitment ${batch[i]!.id} not announced: ${failure.message}`), { discard: true })).pipe(
          Effect.withSpan("Announcements.send", { attributes: { "flexibility.announcements": batch.length } })
        )

    const batches = yield* Batches.make({ task: "publish_committed", size: announceBatchSize, linger: announceBatchLinger, send })

    /** Announces `commitment` soon (in the background). */
    const announce = (commitment: Commitment) => batches.offer([commitment])

    return { announce } as const
  })
}) {}
