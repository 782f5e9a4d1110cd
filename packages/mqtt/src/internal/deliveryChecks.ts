/**
 * Per-connection read decisions of the embedded broker: which topics this connection may
 * receive, decided by `authorizeRead` and reused for `ttl`, and the deliveries waiting for a
 * decision, in the order the broker handed them over.
 *
 * aedes's `authorizeForward` hook is synchronous, so a delivery can only be checked against a
 * decision that already exists. The broker therefore puts this gate in front of each
 * connection's delivery functions: a delivery whose topic has a fresh decision goes straight on
 * (no extra tick); any other waits, behind the deliveries before it, until its decision comes
 * back. The decision travels with the packet to `authorizeForward`, which enforces it.
 */

/** One delivery as aedes makes it: the packet, and the function that writes it to the client. */
export type Deliver<P> = (packet: P, done: () => void) => void

interface Held<P> {
  readonly packet: P
  readonly deliver: Deliver<P>
  verdict: boolean | undefined
}

interface Request<P> {
  readonly startedAt: number
  readonly waiting: Array<Held<P>>
}

export interface Options {
  /** How long a decision is reused, in ms; 0 asks for every delivery. */
  readonly ttl: number
  /** Asks `authorizeRead`; `answer` is called once, with false when the question failed. */
  readonly ask: (topic: string, answer: (allowed: boolean) => void) => void
  /** Topics remembered per connection; the oldest decision is forgotten first. */
  readonly maxTopics: number
  /** Deliveries that may wait for decisions; beyond it `overflow` is called and they are dropped. */
  readonly maxHeld: number
  readonly overflow: () => void
  readonly now?: () => number
}

/** Decisions travel with the packet object aedes passes from the delivery to `authorizeForward`. */
const verdicts = new WeakMap<object, boolean>()

/** The decision the gate attached to this packet, if it went through one. */
export const verdictOf = (packet: object): boolean | undefined => verdicts.get(packet)

export class ConnectionReads<P extends { readonly topic: string }> {
  private readonly decisions = new Map<string, { readonly allowed: boolean; readonly at: number }>()
  private readonly inflight = new Map<string, Request<P>>()
  private held: Array<Held<P>> = []
  private closed = false
  private readonly now: () => number

  constructor(private readonly options: Options) {
    this.now = options.now ?? Date.now
  }

  /** The decision on `topic` if it is younger than the TTL. */
  cached(topic: string): boolean | undefined {
    const decision = this.decisions.get(topic)
    return decision !== undefined && this.now() - decision.at < this.options.ttl ? decision.allowed : undefined
  }

  /**
   * The fresh decision on `topic`, asking for the next one in the background once it is older
   * than half the TTL: a topic that keeps receiving never waits for a decision (unless the
   * question takes longer than half the TTL), and a decision is still never used past the TTL.
   */
  private current(topic: string): boolean | undefined {
    const decision = this.decisions.get(topic)
    if (decision === undefined) return undefined
    const age = this.now() - decision.at
    if (age >= this.options.ttl) return undefined
    if (age >= this.options.ttl / 2 && !this.inflight.has(topic)) this.request(topic)
    return decision.allowed
  }

  /**
   * Hands `packet` to `deliver` once it has a decision. `done` (aedes's flow control) is called
   * at once for a held packet, so a slow decision delays this connection only, never the
   * broker's other deliveries; `maxHeld` bounds what it may hold.
   */
  gate(packet: P, deliver: Deliver<P>, done: () => void): void {
    if (verdicts.has(packet) || this.closed) return deliver(packet, done)
    const cached = this.current(packet.topic)
    if (this.held.length === 0 && cached !== undefined) {
      verdicts.set(packet, cached)
      return deliver(packet, done)
    }
    setImmediate(done)
    if (this.held.length >= this.options.maxHeld) {
      this.close()
      return this.options.overflow()
    }
    const held: Held<P> = { packet, deliver, verdict: cached }
    this.held.push(held)
    if (cached === undefined) this.request(packet.topic).waiting.push(held)
  }

  /** Forgets held deliveries (the connection is gone); later deliveries pass to aedes unchecked here and are refused by `authorizeForward`. */
  close(): void {
    this.closed = true
    this.held = []
    this.inflight.clear()
  }

  /** The question on `topic` a new delivery may wait for: one in flight asked within the TTL, or a new one. */
  private request(topic: string): Request<P> {
    const now = this.now()
    const current = this.inflight.get(topic)
    if (current !== undefined && now - current.startedAt < this.options.ttl) return current
    const request: Request<P> = { startedAt: now, waiting: [] }
    this.inflight.set(topic, request)
    this.options.ask(topic, (allowed) => {
      if (this.closed) return
      if (this.inflight.get(topic) === request) this.inflight.delete(topic)
      // Stamped with when it was asked, so a decision is never trusted longer than the TTL
      // after the policy it reflects.
      if (this.options.ttl > 0) this.remember(topic, allowed, request.startedAt)
      for (const held of request.waiting) held.verdict = allowed
      this.pump()
    })
    return request
  }

  private remember(topic: string, allowed: boolean, at: number): void {
    const previous = this.decisions.get(topic)
    if (previous !== undefined && previous.at > at) return
    this.decisions.delete(topic)
    this.decisions.set(topic, { allowed, at })
    if (this.decisions.size > this.options.maxTopics) {
      const oldest = this.decisions.keys().next()
      if (oldest.done !== true) this.decisions.delete(oldest.value)
    }
  }

  /** Delivers the decided deliveries at the head of the line, in order. */
  private pump(): void {
    let delivered = 0
    for (const held of this.held) {
      if (held.verdict === undefined) break
      delivered++
    }
    if (delivered === 0) return
    const ready = this.held.splice(0, delivered)
    for (const held of ready) {
      verdicts.set(held.packet, held.verdict!)
      held.deliver(held.packet, noop)
    }
  }
}

const noop = () => {}
