/**
 * The push worker threads (`NUDGING_PUSH_WORKERS`, `PushWorker.ts`) as seen from the service's
 * thread: `send` hands a push to the worker with the fewest in flight and calls back with its
 * result. Pushes handed over in the same turn of the event loop go to a worker in one message
 * (`setImmediate`): the Dispatcher starts a batch's sends together, and one `postMessage` per
 * push would cost the service's thread part of what the workers save it.
 *
 * A worker that fails (an exception it did not catch, an exit) answers its pushes in flight with
 * `Retry` (the Dispatcher's backoff sends them again) and is replaced. `close` waits for the
 * pushes in flight (each bounded by `WEBPUSH_TIMEOUT_SECONDS`), then stops the threads.
 * Workers hold the process open only while they have pushes in flight.
 */
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import type { PushRequest, Transport, TransportOptions, TransportResult } from "./PushTransport.js"
import type { FromWorker, ToWorker } from "./PushWorker.js"

/**
 * The worker's compiled entry. Taken from `dist/` whether this module runs from `dist/` or, in
 * the tests, from `src/` (a worker thread cannot load TypeScript): the tests run after `pnpm build`.
 */
export const workerFile = fileURLToPath(new URL("../dist/PushWorker.js", import.meta.url))

export interface PushPool extends Pick<Transport, "send"> {
  /** Waits for the pushes in flight (at most `timeoutMillis`; the rest answer `Retry`), then stops the threads. */
  readonly close: (timeoutMillis: number) => Promise<void>
}

interface Thread {
  readonly worker: Worker
  /** Pushes handed to this worker and not yet answered. */
  readonly pending: Map<number, (result: TransportResult) => void>
  outbox: Array<readonly [number, PushRequest]>
}

/** Starts `size` workers; throws when the compiled worker is missing (the service was not built). */
export const startPool = (size: number, options: TransportOptions): PushPool => {
  if (!fs.existsSync(workerFile)) {
    throw new Error(`the push worker ${workerFile} is missing: build the service (pnpm build), or set NUDGING_PUSH_WORKERS=0`)
  }
  let nextId = 0
  let closing = false
  let drained: (() => void) | undefined
  const threads: Array<Thread> = []
  const inFlight = () => threads.reduce((n, t) => n + t.pending.size, 0)

  const answer = (thread: Thread, id: number, result: TransportResult) => {
    const done = thread.pending.get(id)
    if (done === undefined) return // cancelled meanwhile
    thread.pending.delete(id)
    if (thread.pending.size === 0) thread.worker.unref()
    done(result)
    if (drained !== undefined && inFlight() === 0) drained()
  }

  const spawn = (slot: number) => {
    const worker = new Worker(workerFile, { workerData: options, name: `nudging push ${slot + 1}` })
    worker.unref()
    const thread: Thread = { worker, pending: new Map(), outbox: [] }
    threads[slot] = thread
    worker.on("message", (message: FromWorker) => {
      for (const [id, result] of message.results) answer(thread, id, result)
    })
    const failed = (reason: string) => {
      if (threads[slot] !== thread) return
      for (const id of [...thread.pending.keys()]) {
        answer(thread, id, { _tag: "Retry", message: `the push worker stopped (${reason}) before the push service answered`, retryAfterMillis: undefined })
      }
      thread.outbox = []
      if (!closing) spawn(slot)
    }
    worker.on("error", (error) => failed(error.message))
    worker.on("exit", (code) => failed(`exit code ${code}`))
  }
  for (let slot = 0; slot < size; slot++) spawn(slot)

  const flush = (thread: Thread) => {
    const sends = thread.outbox
    thread.outbox = []
    if (sends.length > 0 && threads.includes(thread)) thread.worker.postMessage({ sends } satisfies ToWorker)
  }

  const send = (request: PushRequest, done: (result: TransportResult) => void): () => void => {
    if (closing) {
      done({ _tag: "Retry", message: "the service is stopping", retryAfterMillis: undefined })
      return () => {}
    }
    let thread = threads[0]!
    for (const t of threads) if (t.pending.size < thread.pending.size) thread = t
    const id = nextId++
    if (thread.pending.size === 0) thread.worker.ref()
    thread.pending.set(id, done)
    if (thread.outbox.length === 0) setImmediate(flush, thread)
    thread.outbox.push([id, request])
    return () => {
      if (!thread.pending.delete(id)) return
      if (thread.pending.size === 0) thread.worker.unref()
      const queued = thread.outbox.findIndex(([queuedId]) => queuedId === id)
      if (queued >= 0) thread.outbox.splice(queued, 1)
      else thread.worker.postMessage({ cancel: id } satisfies ToWorker)
      if (drained !== undefined && inFlight() === 0) drained()
    }
  }

  const close = async (timeoutMillis: number) => {
    closing = true
    if (inFlight() > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMillis)
        drained = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    for (const thread of threads) {
      for (const id of [...thread.pending.keys()]) {
        answer(thread, id, { _tag: "Retry", message: "the service stopped before the push service answered", retryAfterMillis: undefined })
      }
    }
    await Promise.all(threads.map((t) => t.worker.terminate()))
  }

  return { send, close }
}
