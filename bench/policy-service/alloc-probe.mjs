// Preloaded into a server by alloc.mjs (`node --import <this file> ...`): measures what the
// server allocates between two SIGUSR2 signals and writes it as JSON to REC_ALLOC_PROBE_OUT.
//
// REC_ALLOC_PROBE=gc (default): every garbage collection in the window (v8.GCProfiler: type,
// pause, heap before and after). The bytes allocated are the heap's growth between collections
// plus what each collection freed, so they are exact, not sampled.
// REC_ALLOC_PROBE=heap: V8's sampling heap profiler over the window, counting the objects the
// collectors freed too (`includeObjectsCollectedBy*`), so the profile shows every allocation
// site, not only what is still alive at the end. Slower: use it to find allocators, the gc mode
// to count bytes.
import * as fs from "node:fs"
import * as inspector from "node:inspector"
import * as v8 from "node:v8"

const mode = process.env.REC_ALLOC_PROBE ?? "gc"
const out = process.env.REC_ALLOC_PROBE_OUT
if (out === undefined) throw new Error("REC_ALLOC_PROBE_OUT is not set")

const post = (session, method, params) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result)))
  )

let window

const start = async () => {
  if (mode === "heap") {
    const session = new inspector.Session()
    session.connect()
    await post(session, "HeapProfiler.enable")
    await post(session, "HeapProfiler.startSampling", {
      samplingInterval: Number(process.env.REC_ALLOC_PROBE_INTERVAL ?? 1024),
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true
    })
    return { session }
  }
  const profiler = new v8.GCProfiler()
  const used = v8.getHeapStatistics().used_heap_size
  profiler.start()
  return { profiler, used }
}

const stop = async (w) => {
  if (mode === "heap") {
    const { profile } = await post(w.session, "HeapProfiler.stopSampling")
    w.session.disconnect()
    return { mode, profile }
  }
  const { statistics } = w.profiler.stop()
  const end = v8.getHeapStatistics().used_heap_size
  let allocated = 0
  let previous = w.used
  const collections = {}
  for (const gc of statistics) {
    const before = gc.beforeGC.heapStatistics.usedHeapSize
    const after = gc.afterGC.heapStatistics.usedHeapSize
    allocated += Math.max(0, before - previous)
    previous = after
    const entry = (collections[gc.gcType] ??= { count: 0, pause_ms: 0, max_ms: 0 })
    entry.count++
    entry.pause_ms += gc.cost / 1000
    entry.max_ms = Math.max(entry.max_ms, gc.cost / 1000)
  }
  allocated += Math.max(0, end - previous)
  return { mode, allocated_bytes: allocated, collections }
}

process.on("SIGUSR2", () => {
  if (window === undefined) {
    window = start()
    window.then(() => fs.writeFileSync(out, JSON.stringify({ started: true })))
    return
  }
  const current = window
  window = undefined
  current.then(stop).then((result) => fs.writeFileSync(out, JSON.stringify(result)))
})
