import * as os from "node:os"
import * as path from "node:path"
import { defineConfig } from "vitest/config"
import { LongestFirstSequencer } from "./vitest.sequencer.js"

// One Vitest project per workspace package (each has its own vitest.config.ts).
// Most test files wait on sockets, servers starting and timers rather than on the CPU, and
// Vitest's default on a 2-core machine is one worker (CPUs - 1): three keep both cores busy.
// REC_TEST_WORKERS overrides it (1 runs the files one at a time).
const workers = Number(process.env["REC_TEST_WORKERS"] ?? 3)

// A new PGlite database (dozens per run, and every service a test starts) is loaded from a
// template cluster instead of running initdb again (@rec/db, internal/pgliteTemplate.ts). The
// workers and the processes they start inherit the setting.
process.env["PGLITE_TEMPLATE_CACHE"] ??= path.join(os.tmpdir(), `rec-pglite-template-${process.getuid?.() ?? "user"}`)

export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "services/*/vitest.config.ts"],
    maxWorkers: workers,
    minWorkers: 1,
    sequence: { sequencer: LongestFirstSequencer }
  }
})
