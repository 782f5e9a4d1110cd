// Preloaded into each service process by the load and soak scripts (`node --import
// ./bench/load/diagnostics.mjs --expose-gc dist/main.js`): every LOAD_DIAGNOSTICS_MS (default
// 5000) it collects garbage (when --expose-gc is given, so the heap figure is what survives, not
// what the collector has not reached yet) and appends one JSON line to LOAD_DIAGNOSTICS_FILE:
// heap used, RSS and the number of active handles and requests
// (`process.getActiveResourcesInfo()`: sockets, timers, file handles...), by kind.
//
// Why a preload and not a diagnostics endpoint in the services: it measures any process as it
// runs in production, adds no route to harden, and needs no change to the service kit.
/* global setInterval */
import * as fs from "node:fs"

const file = process.env.LOAD_DIAGNOSTICS_FILE
if (file !== undefined && file !== "") {
  const every = Number(process.env.LOAD_DIAGNOSTICS_MS ?? "5000")
  const sample = () => {
    if (typeof globalThis.gc === "function") globalThis.gc()
    const memory = process.memoryUsage()
    const resources = process.getActiveResourcesInfo()
    const kinds = {}
    for (const kind of resources) kinds[kind] = (kinds[kind] ?? 0) + 1
    fs.appendFileSync(file, JSON.stringify({
      at: Date.now(),
      heap_used: memory.heapUsed,
      rss: memory.rss,
      external: memory.external,
      handles: resources.length,
      kinds
    }) + "\n")
  }
  setInterval(sample, every).unref()
}
