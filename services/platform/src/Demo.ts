/**
 * `npm run demo`: plays the pipelines against a running platform (`npm start`), so alerts,
 * nudges, reminders and points appear without anyone writing a message, then reads back what
 * happened through the services' APIs.
 *
 * 1. `participant` accepts a flexibility suggestion through the participant gateway, for a
 *    window open now (so the reminder is due at once);
 * 2. a commitment of `participant` for the last hour that has ended is recorded with the
 *    flexibility service's own client (`svc-flexibility`, the back office: users can only commit
 *    to windows still to come), so the settlement has something to settle right away;
 * 3. the pipelines' client (`svc-pipelines`) publishes completed runs on the broker, as the
 *    orchestrator does (`@rec/mqtt` `PipelineRunEvent` on `rec/pipelines/runs/<namespace>`):
 *    `grid-resilience-flow` for `dso-alto-garda` on a day the digital twin has warnings (the grid
 *    gateway's alerts), `rec-forecasting-flow` (flexibility: opportunity nudges to every member),
 *    `meters-flow` (flexibility: reminders of open windows), `rec-flexibility-flow` (flexibility:
 *    settlement, points);
 * 4. prints the notifications and points of `participant`, read back through the participant
 *    gateway, and the e-mails the alerts sent to the operator's recipients (the mail catcher's
 *    directory).
 *
 * Every step goes over real HTTP and MQTT with real tokens of the dev identity provider; it is
 * safe to run again (new run ids; a suggestion already answered is skipped).
 */
import { PipelineRuns } from "@rec/mqtt"
import { Schema } from "effect"
import * as Mqtt from "mqtt"
import { simpleParser } from "mailparser"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Hosts from "./Hosts.js"
import type { LauncherOptions } from "./Launcher.js"
import * as MailCatcher from "./MailCatcher.js"

export interface DemoReport {
  readonly published: ReadonlyArray<PipelineRuns.PipelineRunEvent>
  /** How many times the runs were published (again when a listener had not subscribed yet). */
  readonly attempts: number
  readonly gridPeriod: string | undefined
  readonly accepted: string
  readonly settlementCommitment: string
  readonly participant: { readonly notifications: number; readonly titles: ReadonlyArray<string>; readonly points: Points }
  /** E-mails the mail catcher received during this run (the grid alerts go to the operator's recipients). */
  readonly emails: ReadonlyArray<{ readonly to: string; readonly subject: string }>
}

interface Points {
  readonly total_points: number
  readonly settled_commitments: number
  readonly pending_points_estimated: number
  readonly open_commitments: number
}

const encodeEvent = Schema.encodeSync(PipelineRuns.PipelineRunEvent)

/** The demo against the platform configured by `options` (the same environment as `npm start`). */
export const run = async (
  options: LauncherOptions,
  say: (line: string) => void = console.log,
  /** The broker when it is not the embedded one (`PLATFORM_MQTT_HOST`). */
  brokerHost?: string | undefined
): Promise<DemoReport> => {
  const host = Hosts.forConnecting(options.host)
  const at = (port: number) => `http://${host}:${port}`
  const idp = options.idp.issuer ?? `http://${host}:${options.idp.port ?? 8080}`
  const tokenEndpoint = `${idp}/protocol/openid-connect/token`

  const token = async (form: Record<string, string>, basic: string): Promise<string> => {
    const response = await fetch(tokenEndpoint, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(basic).toString("base64")}` },
      body: new URLSearchParams(form)
    })
    if (!response.ok) throw new Error(`the identity provider at ${idp} refused a token (${response.status}): is the platform running?`)
    return ((await response.json()) as { access_token: string }).access_token
  }
  const userToken = (username: string) =>
    token({ grant_type: "password", username, password: username }, "rec-cli:dev-only-secret-rec-cli")
  const serviceToken = (client: string) => token({ grant_type: "client_credentials" }, `${client}:dev-only-secret-${client}`)

  const call = async <A>(method: string, url: string, bearer: string, body?: unknown): Promise<{ status: number; body: A }> => {
    const response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, body: (text === "" ? undefined : JSON.parse(text)) as A }
  }
  const expectOk = <A>(what: string, result: { status: number; body: A }): A => {
    if (result.status >= 300) throw new Error(`${what}: ${result.status} ${JSON.stringify(result.body)}`)
    return result.body
  }

  const [participant, operator, pipelines, flexibilityService] = await Promise.all([
    userToken("participant"),
    userToken("dso-operator"),
    serviceToken("svc-pipelines"),
    serviceToken("svc-flexibility")
  ])
  const participantGateway = at(options.ports.participantGateway)
  const now = Date.now()
  const mailBefore = new Set(mailFiles(options.dataDir))

  // 1. Accept a suggestion for a window open now.
  const suggestions = expectOk(
    "suggestions",
    await call<ReadonlyArray<{ id: string; reward_points: number }>>("GET", `${participantGateway}/api/suggestions`, participant)
  )
  let accepted = "none (the digital twin has no window today or tomorrow)"
  for (const suggestion of suggestions) {
    const answer = await call<{ commitment_id: string | null }>(
      "POST",
      `${participantGateway}/api/suggestions/${encodeURIComponent(suggestion.id)}/respond`,
      participant,
      { response: "accepted", period_start: new Date(now - 60_000).toISOString(), period_end: new Date(now + 3_540_000).toISOString() }
    )
    if (answer.status === 409) continue // answered by an earlier demo
    accepted = `${suggestion.id} -> commitment ${expectOk("respond", answer).commitment_id}`
    break
  }
  if (suggestions.length > 0 && accepted.startsWith("none")) accepted = "every suggestion was answered by an earlier run"
  say(`participant accepted a suggestion for a window open now: ${accepted}`)

  // 2. A commitment for the last hour that has ended (the settlement's material).
  const profile = expectOk(
    "the participant's profile",
    await call<{ membership: { community: { key: string } } }>(
      "GET",
      `${at(options.ports.digitalTwin)}/participants/${subjectOf(participant)}/profile`,
      participant
    )
  )
  const assets = expectOk(
    "the participant's assets",
    await call<{ items: ReadonlyArray<{ sensor_id?: string | null }> }>(
      "GET",
      `${at(options.ports.digitalTwin)}/participants/${subjectOf(participant)}/assets`,
      participant
    )
  )
  const meter = assets.items.find((a) => typeof a.sensor_id === "string")?.sensor_id ?? undefined
  const hourEnd = Math.floor(now / 3_600_000) * 3_600_000
  const window = { start: new Date(hourEnd - 3_600_000).toISOString(), end: new Date(hourEnd).toISOString() }
  const settlementSuggestion = `demo-settlement-${window.start.slice(0, 13)}`
  const created = await call<{ id: string }>("POST", `${at(options.ports.flexibility)}/api/commitments`, flexibilityService, {
    user_id: subjectOf(participant),
    suggestion_id: settlementSuggestion,
    community_id: profile.membership.community.key,
    device_id: meter ?? null,
    period_start: window.start,
    period_end: window.end,
    reward_points_estimated: 5
  })
  const settlementCommitment = created.status === 409
    ? `already recorded for ${window.start}–${window.end}`
    : `${expectOk("the settlement commitment", created).id} (${window.start}–${window.end}, meter ${meter})`
  say(`commitment for the hour that just ended: ${settlementCommitment}`)

  const participantNotifications = () =>
    call<{ items: ReadonlyArray<{ title: string }>; total: number }>("GET", `${participantGateway}/api/notifications?limit=50`, participant)
      .then((r) => expectOk("the participant's notifications", r))
  const points = () => call<Points>("GET", `${participantGateway}/api/points`, participant).then((r) => expectOk("points", r))
  const [notesBefore, pointsBefore] = await Promise.all([participantNotifications(), points()])

  // 3. The pipelines complete.
  const gridPeriod = await dayWithWarnings(at(options.ports.gridGateway), operator, now, call)
  const stamp = new Date(now).toISOString()
  const runId = (flow: string) => `demo-${flow}-${now}`
  const events: ReadonlyArray<PipelineRuns.PipelineRunEvent> = [
    {
      flow: "grid-resilience-flow",
      namespace: "grid",
      status: "completed",
      run_id: runId("grid"),
      timestamp: stamp,
      network_id: "dso-alto-garda",
      ...(gridPeriod === undefined ? {} : { period: gridPeriod })
    },
    { flow: "rec-forecasting-flow", namespace: "rec", status: "completed", run_id: runId("forecasting"), timestamp: stamp },
    { flow: "meters-flow", namespace: "rec", status: "completed", run_id: runId("meters"), timestamp: stamp },
    {
      flow: "rec-flexibility-flow",
      namespace: "rec",
      status: "completed",
      run_id: runId("settlement"),
      timestamp: stamp,
      // A window belongs to the day it ended in, ends excluded from the next day (00:00 is the day before's).
      period: new Date(hourEnd - 1).toISOString().slice(0, 10)
    }
  ]
  const broker = `mqtt://${brokerHost ?? host}:${options.ports.mqtt}`
  const client = await Mqtt.connectAsync(broker, {
    clientId: `rec-demo-${now}`,
    username: "svc-pipelines",
    password: pipelines,
    reconnectPeriod: 0,
    connectTimeout: 10_000
  })
  // 4. What the users see, once the listeners had time to react.
  const settle = async <A>(read: () => Promise<A>, done: (a: A) => boolean, seconds = 20): Promise<A> => {
    const deadline = Date.now() + seconds * 1000
    let last = await read()
    while (!done(last) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000))
      last = await read()
    }
    return last
  }
  const settled = (p: Points) => p.settled_commitments > pointsBefore.settled_commitments
  // A listener still connecting (a platform that has just started) misses what is published before it
  // subscribes: publish the same runs again until the settlement shows. Every reaction is idempotent
  // per run id (QoS 1 is at least once), so a second delivery changes nothing.
  let attempts = 0
  let settledPoints = pointsBefore
  try {
    // Without a new commitment (recorded by an earlier run this hour) there is no settlement to wait for.
    const awaitingSettlement = created.status !== 409
    while (attempts === 0 || (awaitingSettlement && attempts < 4 && !settled(settledPoints))) {
      attempts += 1
      for (const event of events) {
        await client.publishAsync(`rec/pipelines/runs/${event.namespace}`, JSON.stringify(encodeEvent(event)), { qos: 1 })
        if (attempts === 1) {
          say(`published ${event.flow} (${event.run_id}${event.period === undefined ? "" : `, period ${event.period}`}) on rec/pipelines/runs/${event.namespace}`)
        }
      }
      if (attempts > 1) say(`published the same runs again (attempt ${attempts}): the settlement had not shown yet`)
      settledPoints = await settle(points, settled, awaitingSettlement ? 15 : 3)
    }
  } finally {
    await client.endAsync()
  }

  // An opportunity, a reminder and a settlement notice (fewer when the daily cap or an earlier run got there first).
  const notes = await settle(participantNotifications, (n) => n.total >= notesBefore.total + 3)
  const newMail = () => Promise.resolve(mailFiles(options.dataDir).filter((f) => !mailBefore.has(f)))
  const emails = await Promise.all(
    (await settle(newMail, (files) => files.length > 0, gridPeriod === undefined ? 1 : 10)).map(async (file) => {
      const mail = await simpleParser(fs.readFileSync(file))
      const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(", ") : mail.to?.text ?? ""
      return { to, subject: mail.subject ?? "" }
    })
  )

  return {
    published: events,
    attempts,
    gridPeriod,
    accepted,
    settlementCommitment,
    participant: { notifications: notes.total, titles: notes.items.map((n) => n.title), points: settledPoints },
    emails
  }
}

/** The messages the mail catcher kept. */
const mailFiles = (dataDir: string): ReadonlyArray<string> => {
  const directory = MailCatcher.directory(dataDir)
  return fs.existsSync(directory)
    ? fs.readdirSync(directory).filter((f) => f.endsWith(".eml")).sort().map((f) => path.join(directory, f))
    : []
}

/** The `sub` of an access token (the dev identity provider's tokens are JWTs). */
const subjectOf = (token: string): string =>
  (JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as { sub: string }).sub

/** A day of the twin's window (today first, then tomorrow, then the past week) with wind or heat warnings. */
const dayWithWarnings = async (
  gridGateway: string,
  operator: string,
  now: number,
  call: <A>(method: string, url: string, bearer: string) => Promise<{ status: number; body: A }>
): Promise<string | undefined> => {
  const days = [0, 1, 2, -1, -2, -3, -4, -5, -6, -7].map((d) => new Date(now + d * 86_400_000).toISOString().slice(0, 10))
  for (const day of days) {
    for (const hazard of ["wind", "heat"]) {
      const result = await call<ReadonlyArray<{ risk_level: string; events: number }>>(
        "GET",
        `${gridGateway}/api/grid/dso-alto-garda/${hazard}/alert-distribution?dates=${day}`,
        operator
      )
      if (result.status === 200 && result.body.some((d) => d.risk_level !== "LOW" && d.events > 0)) return day
    }
  }
  return undefined
}
