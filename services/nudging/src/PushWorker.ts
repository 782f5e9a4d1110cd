/**
 * A push worker thread (`NUDGING_PUSH_WORKERS`, started by `PushPool.ts`): encrypts and sends the
 * web pushes the service's thread hands it, so the ECDH and AES-GCM of every message and its
 * HTTP exchange do not hold up the ingests on the service's event loop.
 *
 * Messages in: `{ sends: [[id, PushRequest], ...] }` and `{ cancel: id }`; out:
 * `{ results: [[id, TransportResult], ...] }`. Results finished in the same turn of this thread's
 * event loop go back in one message (`setImmediate`), as the service's thread batches its sends.
 * `workerData` is the transport's options, the VAPID private key included: a thread of the same
 * process, the key goes nowhere else.
 */
import { parentPort, workerData } from "node:worker_threads"
import { makeTransport, type PushRequest, type TransportOptions, type TransportResult } from "./PushTransport.js"

export type ToWorker =
  | { readonly sends: ReadonlyArray<readonly [number, PushRequest]> }
  | { readonly cancel: number }

export interface FromWorker {
  readonly results: ReadonlyArray<readonly [number, TransportResult]>
}

const port = parentPort
if (port === null) throw new Error("PushWorker.js runs as a worker thread (PushPool starts it)")

const transport = makeTransport(workerData as TransportOptions)
const inFlight = new Map<number, () => void>()
let finished: Array<readonly [number, TransportResult]> = []

const flush = () => {
  const results = finished
  finished = []
  port.postMessage({ results } satisfies FromWorker)
}

port.on("message", (message: ToWorker) => {
  if ("cancel" in message) {
    inFlight.get(message.cancel)?.()
    inFlight.delete(message.cancel)
    return
  }
  for (const [id, request] of message.sends) {
    let done = false
    const cancel = transport.send(request, (result) => {
      done = true
      inFlight.delete(id)
      if (finished.length === 0) setImmediate(flush)
      finished.push([id, result])
    })
    if (!done) inFlight.set(id, cancel)
  }
})

// Closed by the pool once nothing is in flight: the kept-alive connections go with the thread.
port.on("close", () => transport.close())
