/**
 * `npm run demo` (after `npm start` in another terminal): plays the pipelines and prints what
 * the users see (`Demo.ts`). Reads the same environment as the launcher (ports, `HOST`,
 * `PLATFORM_DATA_DIR`).
 */
import { Effect } from "effect"
import * as Config from "./Config.js"
import * as Demo from "./Demo.js"

const main = async () => {
  const options = await Effect.runPromise(Config.launcher)
  const report = await Demo.run(options, console.log, options.embeddedBroker ? undefined : process.env["PLATFORM_MQTT_HOST"])
  const { participant } = report
  console.log("")
  console.log(`participant: ${participant.notifications} notification(s)`)
  for (const title of participant.titles.slice(0, 10)) console.log(`  - ${title}`)
  console.log(
    `participant: ${participant.points.total_points} point(s) from ${participant.points.settled_commitments} settled commitment(s); ` +
      `${participant.points.open_commitments} open commitment(s) worth ${participant.points.pending_points_estimated} estimated point(s)`
  )
  console.log(
    report.gridPeriod === undefined
      ? "grid: the digital twin has no wind or heat warning on dso-alto-garda this week, so no alert fired"
      : `grid: alerts for dso-alto-garda on ${report.gridPeriod}: ${report.emails.length} e-mail(s) caught`
  )
  for (const mail of report.emails) console.log(`  - to ${mail.to}: ${mail.subject}`)
  console.log("")
  console.log("See them yourself: the banner of npm start lists the calls (participant gateway /api/notifications, /api/points).")
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
