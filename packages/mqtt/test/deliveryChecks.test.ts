/**
 * The per-connection gate of the embedded broker's delivery checks, without a broker: questions
 * answered by hand, a clock set by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConnectionReads, verdictOf } from "@rec/mqtt/internal/deliveryChecks"

interface Packet {
  readonly topic: string
  readonly n: number
}

const setup = (options: { ttl?: number; maxTopics?: number; maxHeld?: number } = {}) => {
  let now = 1_000
  const questions: Array<{ topic: string; answer: (allowed: boolean) => void }> = []
  const delivered: Array<{ n: number; allowed: boolean | undefined }> = []
  let overflows = 0
  const reads = new ConnectionReads<Packet>({
    ttl: options.ttl ?? 1_000,
    ask: (topic, answer) => questions.push({ topic, answer }),
    maxTopics: options.maxTopics ?? 100,
    maxHeld: options.maxHeld ?? 100,
    overflow: () => overflows++,
    now: () => now
  })
  const deliver = (packet: Packet) => delivered.push({ n: packet.n, allowed: verdictOf(packet) })
  const send = (topic: string, n: number) => reads.gate({ topic, n }, deliver, () => {})
  return {
    reads,
    questions,
    delivered,
    send,
    overflows: () => overflows,
    advance: (ms: number) => {
      now += ms
    }
  }
}

describe("ConnectionReads", () => {
  it("keeps the connection's order when decisions come back out of order", () => {
    const t = setup()
    t.send("a", 1)
    t.send("b", 2)
    t.send("a", 3)
    expect(t.questions.map((q) => q.topic)).toEqual(["a", "b"])
    t.questions[1]!.answer(false)
    expect(t.delivered).toEqual([])
    t.questions[0]!.answer(true)
    expect(t.delivered).toEqual([{ n: 1, allowed: true }, { n: 2, allowed: false }, { n: 3, allowed: true }])
    // Decided topics pass at once, with their decision attached.
    t.send("b", 4)
    expect(t.delivered.at(-1)).toEqual({ n: 4, allowed: false })
    expect(t.questions).toHaveLength(2)
  })

  it("never uses a decision past the TTL after it was asked, and renews it after half", () => {
    const t = setup({ ttl: 1_000 })
    t.send("a", 1)
    t.advance(300)
    t.questions[0]!.answer(true) // asked at 0: good until 1,000
    t.advance(300) // 600: older than half the TTL, still used; renewal asked
    t.send("a", 2)
    expect(t.delivered.map((d) => d.n)).toEqual([1, 2])
    expect(t.questions).toHaveLength(2)
    t.advance(400) // 1,000: the first decision is stale, the renewal has not answered
    t.send("a", 3)
    expect(t.delivered.map((d) => d.n)).toEqual([1, 2])
    expect(t.reads.cached("a")).toBeUndefined()
    t.questions[1]!.answer(false) // asked at 600: good until 1,600
    expect(t.delivered.at(-1)).toEqual({ n: 3, allowed: false })
    expect(t.reads.cached("a")).toBe(false)
    t.advance(600)
    expect(t.reads.cached("a")).toBeUndefined()
  })

  it("with TTL 0 every delivery gets its own question", () => {
    const t = setup({ ttl: 0 })
    t.send("a", 1)
    t.send("a", 2)
    expect(t.questions).toHaveLength(2)
    t.questions[1]!.answer(false)
    t.questions[0]!.answer(true)
    expect(t.delivered).toEqual([{ n: 1, allowed: true }, { n: 2, allowed: false }])
    expect(t.reads.cached("a")).toBeUndefined()
  })

  it("forgets the oldest decision beyond maxTopics", () => {
    const t = setup({ maxTopics: 2 })
    for (const [i, topic] of ["a", "b", "c"].entries()) {
      t.send(topic, i)
      t.questions[i]!.answer(true)
    }
    expect(["a", "b", "c"].map((topic) => t.reads.cached(topic))).toEqual([undefined, true, true])
  })

  it("gives up on a connection with more than maxHeld deliveries waiting", () => {
    const t = setup({ maxHeld: 3 })
    for (let n = 0; n < 4; n++) t.send(`t${n}`, n)
    expect(t.overflows()).toBe(1)
    // What was held is dropped; late answers deliver nothing.
    for (const q of t.questions) q.answer(true)
    expect(t.delivered).toEqual([])
  })
})
