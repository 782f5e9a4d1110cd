// A cache of compiled patterns bounded by entries and by total program size, oldest evicted
// first: policies use a bounded set of patterns, and a pattern from input data must not be
// able to pin an unbounded amount of memory.

import type { Regexp } from "./regexp.js"

export class PatternCache {
  private readonly entries = new Map<string, Regexp>()
  private insts = 0

  constructor(
    private readonly maxEntries = 4096,
    /** Total instructions kept (about 40 bytes each). */
    private readonly maxInsts = 1 << 21
  ) {}

  get(key: string): Regexp | undefined {
    return this.entries.get(key)
  }

  set(key: string, re: Regexp): void {
    if (this.entries.has(key) || re.size > this.maxInsts) return
    this.entries.set(key, re)
    this.insts += re.size
    while (this.entries.size > this.maxEntries || this.insts > this.maxInsts) {
      const [oldest, old] = this.entries.entries().next().value as [string, Regexp]
      this.entries.delete(oldest)
      this.insts -= old.size
    }
  }

  /** The compiled pattern for key, compiling (and keeping) it on a miss. */
  getOrCompile(key: string, compile: () => Regexp): Regexp {
    let re = this.entries.get(key)
    if (re === undefined) {
      re = compile()
      this.set(key, re)
    }
    return re
  }
}
