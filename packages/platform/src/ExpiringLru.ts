/**
 * A map of at most `maxSize` entries, each with its own expiry time: the least recently used
 * entry leaves first when the map is full, and an expired entry is dropped when it is looked up.
 * Synchronous on purpose: the caches built on it (verified tokens in `@rec/auth`, decisions in
 * `@rec/policy`) sit on the hot path of every request.
 */
export interface Expiring {
  /** Milliseconds, on the clock the map was given. */
  readonly expiresAt: number
}

export class ExpiringLru<E extends Expiring> {
  // A Map iterates in insertion order; re-inserting an entry makes it the most recently used.
  private readonly entries = new Map<string, E>()

  constructor(
    private readonly maxSize: number,
    private readonly now: () => number = Date.now
  ) {}

  get size(): number {
    return this.entries.size
  }

  /** The entry of `key` if it has not expired, made the most recently used; an expired one is dropped. */
  get(key: string): E | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    if (entry.expiresAt <= this.now()) return undefined
    this.entries.set(key, entry)
    return entry
  }

  /** Stores `entry` as the most recently used, evicting the least recently used beyond `maxSize`. */
  set(key: string, entry: E): void {
    this.entries.delete(key)
    this.entries.set(key, entry)
    while (this.entries.size > this.maxSize) {
      const oldest = this.entries.keys().next()
      if (oldest.done === true) break
      this.entries.delete(oldest.value)
    }
  }

  delete(key: string): void {
    this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}
