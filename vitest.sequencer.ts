// The suite's file order: longest first, from the durations a full run recorded in
// `test-durations.json`. Vitest's own order needs its results cache, which a fresh clone (CI)
// does not have; without it the files go by size, and a three-minute end-to-end file that
// happens to start last keeps the run waiting while the other workers idle. Longest first
// leaves only short files for the end.
//
// `REC_RECORD_TEST_DURATIONS=1 npm test` rewrites the record (vitest.durations.ts): do it on the
// CI machine kind after adding or reshaping slow files, and commit it. A stale record only makes
// the order less good; a file it does not know counts as a slow one and starts early.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestSpecification } from "vitest/node"
import { BaseSequencer } from "vitest/node"

const root = path.dirname(fileURLToPath(import.meta.url))
export const recordFile = path.join(root, "test-durations.json")
const unknownSeconds = 60

export const recordKey = (moduleId: string) => path.relative(root, moduleId).split(path.sep).join("/")

const recorded = (): Record<string, number> => {
  try {
    return JSON.parse(fs.readFileSync(recordFile, "utf8")) as Record<string, number>
  } catch {
    return {}
  }
}

export class LongestFirstSequencer extends BaseSequencer {
  private readonly durations = recorded()

  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const seconds = (spec: TestSpecification) => this.durations[recordKey(spec.moduleId)] ?? unknownSeconds
    return [...files].sort((a, b) => seconds(b) - seconds(a))
  }
}
