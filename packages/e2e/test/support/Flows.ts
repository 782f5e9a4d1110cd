/**
 * The flows of issue 18 point 3, over the platform's public HTTP APIs and the broker only. Each
 * flow returns what the replica checks need (run ids, counts).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { expect } from "vitest"
import * as YAML from "yaml"
import type { Platform } from "../../src/Platform.js"
import { repoRoot } from "../../src/Platform.js"
import { waitUntil } from "../../src/peers/Waiting.js"
import * as WebhookReceiver from "../../src/peers/WebhookReceiver.js"
import { call, expectStatus, subjectOf, userToken } from "./Http.js"

const community = "it-energy-community"
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const isoDay = (millis: number) => new Date(millis).toISOString().slice(0, 10)

// ---------------------------------------------------------------------------------------------
// Registry: import the demo bundle, read it as JSON-LD, export it identical

const importBundle = (p: Platform, token: string, yaml: string, filename: string) => {
  const form = new FormData()
  form.append("file", new Blob([yaml], { type: "application/yaml" }), filename)
  return expectStatus(201, "POST", `${p.urls.registry}/admin/import`, { token, body: form })
}

export const registryFlow = async (p: Platform) => {
  const admin = await userToken(p.urls.devIdp, "admin")
  const original = fs.readFileSync(path.join(repoRoot, "examples/it-energy-community.bundle.yaml"), "utf8")
  await importBundle(p, admin, original, "it-energy-community.bundle.yaml")

  const jsonld = await call<Record<string, unknown>>("GET", `${p.urls.registry}/user/communities/${community}?format=jsonld`, { token: admin })
  expect(jsonld.status).toBe(200)
  expect(jsonld.headers.get("content-type")).toContain("application/ld+json")
  expect(jsonld.body["@context"]).toBe(`${p.urls.registry}/context.jsonld`)
  expect(jsonld.body["@id"]).toBe(`${p.urls.registry}/communities/${community}`)
  expect(JSON.stringify(jsonld.body["@type"])).toContain("https://celine-eu.github.io/ontologies/celine#EnergyCommunity")

  const exportOf = async () => {
    const answer = await call("GET", `${p.urls.registry}/admin/export?community=${community}`, { token: admin })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toContain("application/yaml")
    return answer.text
  }
  const first = await exportOf()
  // The export describes the bundle that was imported: the same members for the same users.
  const membersOf = (yaml: string) => {
    const members = (YAML.parse(yaml) as { members: Record<string, { user_id?: string }> }).members
    return Object.entries(members).map(([key, m]) => [key, m.user_id ?? null]).sort()
  }
  expect(membersOf(first)).toEqual(membersOf(original))
  // And it is the canonical form: imported again, it exports byte for byte the same.
  await importBundle(p, admin, first, "exported.yaml")
  expect(await exportOf()).toBe(first)
}

// ---------------------------------------------------------------------------------------------
// Grid: pipeline completed -> the DSO operator's alert -> nudge -> web push; signed webhook

const network = "dso-alto-garda"

/** A day the digital twin has WARNING or ALERT events on, and the hazards that have them. */
const breachDay = async (p: Platform, token: string) => {
  for (let offset = 2; offset >= -7; offset--) {
    const date = isoDay(Date.now() + offset * 86_400_000)
    const hazards: Array<"wind" | "heat"> = []
    for (const hazard of ["wind", "heat"] as const) {
      const levels = await expectStatus<Array<{ risk_level: string; events: number }>>(
        200,
        "GET",
        `${p.urls["grid-gateway"]}/api/grid/${network}/${hazard}/alert-distribution?dates=${date}`,
        { token }
      )
      if (levels.some((l) => (l.risk_level === "WARNING" || l.risk_level === "ALERT") && l.events > 0)) hazards.push(hazard)
    }
    if (hazards.length > 0) return { date, hazards }
  }
  throw new Error(`the digital twin has no WARNING or ALERT day for ${network}`)
}

export interface GridResult {
  readonly runId: string
  readonly ruleIds: ReadonlyArray<string>
  readonly traceparent: string
}

export const gridFlow = async (p: Platform): Promise<GridResult> => {
  const { push, webhooks, smtp, pipelines } = p.peers
  const operator = await userToken(p.urls.devIdp, "dso-operator")
  const me = await expectStatus<{ user: { sub: string } }>(200, "GET", `${p.urls["grid-gateway"]}/api/me`, { token: operator })
  const owner = me.user.sub

  // The operator's browser subscribes to web push at the nudging service.
  const subscription = push.subscribe("dso-operator")
  await expectStatus(200, "POST", `${p.urls.nudging}/webpush/subscribe`, {
    token: operator,
    json: { user_id: owner, community_id: null, subscription }
  })

  // A webhook, a rule without recipients (the nudge goes to the owner: web push) and one with a
  // control room's address (the nudge goes by e-mail).
  const settings = await expectStatus<{ webhook_secret?: string }>(200, "PUT", `${p.urls["grid-gateway"]}/api/notification-settings`, {
    token: operator,
    json: { webhook_url: webhooks.url }
  })
  const secret = settings.webhook_secret!
  expect(secret).toEqual(expect.any(String))
  const { date, hazards } = await breachDay(p, operator)
  const rules: Array<string> = []
  for (const recipients of [undefined, ["control-room@dso.example"]]) {
    const rule = await expectStatus<{ id: string }>(201, "POST", `${p.urls["grid-gateway"]}/api/alert-rules`, {
      token: operator,
      json: { risk_types: hazards, threshold: "WARNING", ...(recipients ? { recipients } : {}) }
    })
    rules.push(rule.id)
  }

  const event = await pipelines.completed({
    flow: "grid-resilience-flow",
    namespace: "grid",
    network_id: network,
    period: date,
    window_start: "15:00",
    window_end: "19:00"
  })

  // The web push, verified (VAPID) and decrypted at the local push service.
  const received = await waitUntil("the grid alert's web push", () => push.received.find((r) => r.subscriber === "dso-operator"), {
    timeoutMs: 60_000,
    describe: () => `received ${push.received.length}, refused ${push.refused.join("; ")}`
  })
  expect(push.refused).toEqual([])
  expect(received.payload.data.rule_id).toBe("extr_event")
  expect(received.payload.body).toContain("15:00")
  expect(received.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)

  // The two webhooks (one per rule), signed with the secret answered once.
  await waitUntil("the two webhooks", () => (webhooks.received.length >= 2 ? true : undefined), { timeoutMs: 60_000 })
  for (const delivery of webhooks.received) {
    expect(WebhookReceiver.verify(secret, delivery)).toBe(true)
    expect(WebhookReceiver.verify(`${secret}x`, delivery)).toBe(false)
  }
  const bodies = webhooks.received.map((d) => JSON.parse(d.body) as { rule_id: string; run_id: string; type: string; period: string })
  expect(bodies.map((b) => b.rule_id).sort()).toEqual([...rules].sort())
  for (const body of bodies) expect(body).toMatchObject({ type: "grid.alert", run_id: event.run_id, period: date })

  // The control room's e-mail.
  const mail = await waitUntil("the control room's e-mail", () => smtp.messages.find((m) => JSON.stringify(m.to).includes("control-room@dso.example")), {
    timeoutMs: 60_000
  })
  expect(mail.subject).toEqual(expect.any(String))

  // The owner's inbox at the nudging service holds the alert once.
  const inbox = await expectStatus<{ items: Array<{ rule_id: string }>; total: number }>(
    200,
    "GET",
    `${p.urls.nudging}/notifications?user_id=${owner}&community_id=&limit=100`,
    { token: operator }
  )
  expect(inbox.items.filter((n) => n.rule_id === "extr_event")).toHaveLength(1)
  return { runId: event.run_id, ruleIds: rules, traceparent: received.traceparent! }
}

/**
 * The grid flow's trace: the gateway's handling of the run, the nudging service's ingest and the
 * push, one trace id (the one the push service received in `traceparent`). Spans arrive in
 * batches from several processes, so the chain is awaited until it is complete.
 */
export const gridTrace = async (p: Platform, grid: GridResult) => {
  const traceId = grid.traceparent.split("-")[1]!
  const serverKind = 2
  /** The push span and its ancestors (push first), as far as they arrived. */
  const chainOf = () => {
    const spans = p.peers.otlp.spans.filter((s) => s.traceId === traceId)
    const byId = new Map(spans.map((s) => [s.spanId, s]))
    const out: Array<(typeof spans)[number]> = []
    let s = spans.find((span) => span.service === "nudging" && span.name === "WebPush.send")
    while (s !== undefined) {
      out.push(s)
      s = s.parentSpanId === undefined ? undefined : byId.get(s.parentSpanId)
    }
    return out
  }
  const describe = (chain: ReturnType<typeof chainOf>) => chain.map((s) => `${s.service}:${s.name}`).join(" <- ")
  const complete = (chain: ReturnType<typeof chainOf>) =>
    chain.some((s) => s.service === "nudging" && s.kind === serverKind) &&
    chain.some((s) => s.service === "grid-gateway" && s.name === "AlertDispatcher.onPipelineRun")
  const chain = await waitUntil("the grid flow's trace at the OTLP receiver", () => {
    const chain = chainOf()
    return complete(chain) ? chain : undefined
  }, {
    timeoutMs: 60_000,
    describe: () => {
      const pushes = p.peers.otlp.spans.filter((s) => s.name === "WebPush.send").map((s) => s.traceId)
      return `trace ${traceId}: ${describe(chainOf())}; WebPush.send spans in traces ${pushes.join(", ")}; ` +
        `${p.peers.otlp.spans.length} spans collected`
    }
  })
  expect(p.peers.otlp.refused).toEqual([])
  // The nudging service's server span is the ingest request the gateway made.
  const ingest = chain.find((s) => s.service === "nudging" && s.kind === serverKind)!
  expect(JSON.stringify([ingest.name, ingest.attributes]), describe(chain)).toContain("ingest-event")
  return chain.map((s) => `${s.service}:${s.name}`)
}

// ---------------------------------------------------------------------------------------------
// Participant: push subscription -> opportunity -> accept -> reminder -> settlement -> points

interface NudgingNotification {
  readonly id: string
  readonly rule_id: string
}

export interface ParticipantResult {
  readonly forecastRunId: string
  readonly commitmentId: string
  /** When the accepted window ends (epoch ms): the settlement can run after it. */
  readonly windowEnd: number
}

/** Up to the reminder; `participantSettlement` goes on once the accepted window has ended. */
export const participantFlow = async (p: Platform): Promise<ParticipantResult> => {
  const { push, pipelines } = p.peers
  const gateway = `${p.urls["participant-gateway"]}/api`
  const token = await userToken(p.urls.devIdp, "participant")
  const pushesFor = (rule: string) => push.received.filter((r) => r.subscriber === "participant" && r.payload.data.rule_id === rule)

  // The browser subscribes through the gateway.
  const subscribed = await expectStatus<{ push: { subscribed: boolean } }>(200, "POST", `${gateway}/settings/push-subscribe`, {
    token,
    json: push.subscribe("participant")
  })
  expect(subscribed.push.subscribed).toBe(true)

  // The forecasting pipeline completes: the community's members get the opportunity.
  const forecast = await pipelines.completed({ flow: "rec-forecasting-flow", namespace: "rec" })
  const opportunity = await waitUntil("the opportunity's web push", () => pushesFor("flexibility_opportunity")[0], { timeoutMs: 60_000 })
  const listed = await expectStatus<{ items: Array<{ id: string; title: string }> }>(200, "GET", `${gateway}/notifications?limit=100`, { token })
  expect(listed.items.map((n) => n.id)).toContain(opportunity.payload.data.notification_id)

  // Accept a suggestion, for a window that is open now and ends in a few seconds (so that the
  // reminder goes at once and the window can be settled by this test).
  const suggestions = await expectStatus<Array<{ id: string }>>(200, "GET", `${gateway}/suggestions`, { token })
  expect(suggestions.length).toBeGreaterThan(0)
  const windowEnd = Date.now() + 15_000
  const accepted = await expectStatus<{ commitment_id: string; status: string }>(
    200,
    "POST",
    `${gateway}/suggestions/${encodeURIComponent(suggestions[0]!.id)}/respond`,
    {
      token,
      json: {
        response: "accepted",
        period_start: new Date(windowEnd - 2 * 3_600_000).toISOString(),
        period_end: new Date(windowEnd).toISOString()
      }
    }
  )
  expect(accepted.status).toBe("committed")

  // The reminder (the window has begun: sent at once), pushed and listed.
  const reminder = await waitUntil("the reminder's web push", () => pushesFor("flexibility_reminder")[0], { timeoutMs: 60_000 })
  const afterReminder = await expectStatus<{ items: Array<{ id: string }> }>(200, "GET", `${gateway}/notifications?limit=100`, { token })
  expect(afterReminder.items.map((n) => n.id)).toContain(reminder.payload.data.notification_id)
  return { forecastRunId: forecast.run_id, commitmentId: accepted.commitment_id, windowEnd }
}

/** The accepted window ended; the flexibility pipeline completes: settled, points through the gateway. */
export const participantSettlement = async (p: Platform, accepted: ParticipantResult): Promise<{ readonly settlementRunId: string }> => {
  const gateway = `${p.urls["participant-gateway"]}/api`
  const token = await userToken(p.urls.devIdp, "participant")
  const sub = subjectOf(token)
  await sleep(Math.max(0, accepted.windowEnd - Date.now() + 1_000))
  const settlement = await p.peers.pipelines.completed({ flow: "rec-flexibility-flow", namespace: "rec", period: isoDay(accepted.windowEnd) })
  const points = await waitUntil("the settled points", async () => {
    const answer = await expectStatus<{ total_points: number; settled_commitments: number; open_commitments: number }>(
      200,
      "GET",
      `${gateway}/points`,
      { token }
    )
    return answer.settled_commitments === 1 ? answer : undefined
  }, { timeoutMs: 60_000 })
  expect(points.total_points).toBeGreaterThan(0)
  expect(points.open_commitments).toBe(0)
  const commitment = await expectStatus<{ status: string; reward_points_actual: number }>(
    200,
    "GET",
    `${gateway}/commitments/${accepted.commitmentId}`,
    { token }
  )
  expect(commitment).toMatchObject({ status: "settled", reward_points_actual: points.total_points })
  await waitUntil("the settled nudge's web push", () =>
    p.peers.push.received.find((r) => r.subscriber === "participant" && r.payload.data.rule_id === "commitment_settled"), {
    timeoutMs: 60_000
  })
  const inbox = await expectStatus<{ items: Array<NudgingNotification> }>(
    200,
    "GET",
    `${p.urls.nudging}/notifications?user_id=${sub}&community_id=${community}&limit=100`,
    { token }
  )
  expect(inbox.items.map((n) => n.rule_id)).toContain("commitment_settled")
  return { settlementRunId: settlement.run_id }
}

/** Notifications of the participant per rule (for the no-duplicate checks). */
export const participantNotificationCounts = async (p: Platform): Promise<Record<string, number>> => {
  const token = await userToken(p.urls.devIdp, "participant")
  const page = await expectStatus<{ items: Array<NudgingNotification> }>(
    200,
    "GET",
    `${p.urls.nudging}/notifications?user_id=${subjectOf(token)}&community_id=${community}&limit=100&status=all`,
    { token }
  )
  const counts: Record<string, number> = {}
  for (const n of page.items) counts[n.rule_id] = (counts[n.rule_id] ?? 0) + 1
  return counts
}

// ---------------------------------------------------------------------------------------------
// Assistant through the participant gateway's proxy

export const assistantFlow = async (p: Platform) => {
  const gateway = `${p.urls["participant-gateway"]}/api/assistant`
  const token = await userToken(p.urls.devIdp, "participant")
  const marker = `heatpump${Date.now().toString(36)}`
  const document = [
    "# Heat pump schedule",
    "",
    `The community heat pump code-named ${marker} runs between 11:00 and 15:00 when the rooftop panels produce the most.`,
    "Members who move their washing machine into that window earn flexibility points."
  ].join("\n")
  const form = new FormData()
  form.append("file", new Blob([document], { type: "text/markdown" }), "heat-pump.md")
  const upload = await expectStatus<{ id: string; chunk_count: number }>(201, "POST", `${gateway}/upload`, { token, body: form, timeoutMs: 60_000 })
  expect(upload.chunk_count).toBeGreaterThan(0)

  const response = await fetch(`${gateway}/chat`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ message: `When does the heat pump ${marker} run?` }),
    signal: AbortSignal.timeout(60_000)
  })
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toContain("text/event-stream")
  const frames = (await response.text()).split("\n\n").map((f) => f.trim()).filter((f) => f !== "")
  expect(frames.every((f) => f.startsWith("data: "))).toBe(true)
  expect(frames.at(-1)).toBe("data: [DONE]")
  const events = frames.slice(0, -1).map((f) => JSON.parse(f.slice("data: ".length)) as { type: string; data: unknown })
  const meta = events.find((e) => e.type === "meta")
  const sources = events.find((e) => e.type === "sources")
  const tokens = events.filter((e) => e.type === "token")
  const conversationId = (meta?.data as { conversation_id?: unknown } | undefined)?.conversation_id
  expect(conversationId).toEqual(expect.any(String))
  expect(JSON.stringify(sources?.data)).toContain(marker)
  expect(tokens.length).toBeGreaterThan(1)
  expect(tokens.map((t) => t.data as string).join("")).toContain("11:00")

  const conversations = await expectStatus<{ items: Array<{ id: string; message_count: number }> }>(
    200,
    "GET",
    `${gateway}/conversations`,
    { token }
  )
  expect(conversations.items.map((c) => c.id)).toContain(conversationId)
}
