// Records each test file's cost to the run into `test-durations.json` for the suite's order
// (vitest.sequencer.ts). `npm test` adds it when REC_RECORD_TEST_DURATIONS is set.
import * as fs from "node:fs"
import type { Reporter, TestModule } from "vitest/node"
import { recordFile, recordKey } from "./vitest.sequencer.js"

export default class DurationsRecorder implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    const durations: Record<string, number> = {}
    for (const module of modules) {
      // Its worker's setup, the import of the file and all it loads, then its tests and hooks.
      const d = module.diagnostic()
      const ms = d.prepareDuration + d.environmentSetupDuration + d.setupDuration + d.collectDuration + d.duration
      durations[recordKey(module.moduleId)] = Math.round(ms / 100) / 10
    }
    const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)))
    fs.writeFileSync(recordFile, JSON.stringify(sorted, null, 2) + "\n")
  }
}
