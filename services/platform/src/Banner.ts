/**
 * What the launcher prints once everything listens: the URLs, how to get a token, and a call to
 * the policy service that can be pasted as it is. Plain text on stdout, for people (the
 * components' own logs stay JSON lines).
 */
import { Console, Effect, Layer } from "effect"
import * as Hosts from "./Hosts.js"
import type { Component, Context, LauncherOptions } from "./Launcher.js"

const devToken = "node packages/dev-idp/bin/dev-token.js"

/** Which interfaces the platform listens on, in words. */
export const listening = (options: LauncherOptions): string =>
  Hosts.isWildcard(options.host)
    ? `Listening on every interface (HOST=${options.host}): anyone who can reach this machine can get admin tokens ` +
      "from the dev identity provider."
    : Hosts.isLoopback(options.host)
    ? `Listening on ${options.host} only (HOST=0.0.0.0 to reach the platform from other machines).`
    : `Listening on ${options.host} (HOST).`

/** Users whose data the demo seeds, with what they see. */
const demoUsers: ReadonlyArray<readonly [string, string]> = [
  ["participant", "a member of it-energy-community (notifications, suggestions, points)"],
  ["dso-operator", "the operator of dso-alto-garda (grid data, alert rules)"],
  ["admin", "platform administrator"]
]

/** Calls that show the seeded data, for the services that run. */
const examples = (context: Context, started: ReadonlyArray<Component>, tokenCommand: string): ReadonlyArray<string> => {
  const { options } = context
  const running = new Set(started.map((c) => c.name))
  const at = (port: number) => `http://${Hosts.forPeople(options.host)}:${port}`
  const lines: Array<string> = []
  if (running.has("registry")) {
    lines.push(
      "The demo community in the registry:",
      `  curl -s ${at(options.ports.registry)}/user/communities/it-energy-community -H "Authorization: Bearer $(${tokenCommand} participant)"`
    )
  }
  if (running.has("grid gateway")) {
    lines.push(
      "The DSO operator's alert rules:",
      `  curl -s ${at(options.ports.gridGateway)}/api/alert-rules -H "Authorization: Bearer $(${tokenCommand} dso-operator)"`
    )
  }
  if (running.has("participant gateway")) {
    lines.push(
      "A participant's notifications (after npm run demo):",
      `  curl -s ${at(options.ports.participantGateway)}/api/notifications -H "Authorization: Bearer $(${tokenCommand} participant)"`
    )
  }
  return lines.length === 0 ? [] : ["", ...lines, "", "Play the pipelines (alerts, nudges, reminders, points): npm run demo"]
}

export const text = (context: Context, components: ReadonlyArray<Component>): string => {
  const { idp, options } = context
  // dev-token reads PLATFORM_OIDC_BASE_URL and defaults to the standard address.
  const tokenCommand = idp.issuer === "http://localhost:8080" ? devToken : `PLATFORM_OIDC_BASE_URL=${idp.issuer} ${devToken}`
  const started = components.filter((c) => c.layer(context) !== undefined)
  const width = Math.max("dev identity provider".length, ...started.map((c) => c.name.length)) + 2
  const row = (name: string, url: string, notes: ReadonlyArray<string> = []) =>
    [`  ${name.padEnd(width)}${url}`, ...notes.map((n) => `  ${"".padEnd(width)}${n}`)]
  const policy = `http://${Hosts.forPeople(options.host)}:${options.ports.policy}`
  return [
    "",
    "REC platform (development) is running",
    "",
    ...row("dev identity provider", idp.issuer, ["development only: passwords and secrets are in dev/identities.yaml"]),
    ...started.flatMap((c) => {
      const skipped = context.skipped.get(c.name)
      if (skipped === undefined) return row(c.name, c.url(context), c.notes?.(context))
      const { fixes, reason } = c.skippedText?.(skipped, context) ?? { reason: skipped, fixes: [] }
      const commandWidth = Math.max(0, ...fixes.map((f) => f.command.length)) + 3
      return row(
        c.name,
        `not started: ${reason}`,
        fixes.map((fix, i) => `${i === 0 ? "fix:" : " or:"} ${fix.command.padEnd(commandWidth)}${fix.effect}`)
      )
    }),
    "",
    listening(options),
    "Stop with Ctrl-C (or SIGTERM).",
    "",
    "Tokens (users: viewer, editor, manager, admin, nogroup, dso-operator, participant, ...; services: svc-grid, ...):",
    `  ${tokenCommand} --list`,
    ...demoUsers.map(([user, what]) => `  ${`${tokenCommand} ${user}`.padEnd(tokenCommand.length + 22)}# ${what}`),
    `  curl -s -u rec-cli:dev-only-secret-rec-cli -d grant_type=password -d username=viewer -d password=viewer ${idp.tokenEndpoint}`,
    `  curl -s -u svc-grid:dev-only-secret-svc-grid -d grant_type=client_credentials ${idp.tokenEndpoint}`,
    "",
    "Ask the policy service:",
    `  curl -s -X POST ${policy}/dataset/access -H "Authorization: Bearer $(${tokenCommand} viewer)" ` +
    `-H 'Content-Type: application/json' -d '{"dataset_id":"meters-2024","access_level":"internal","action":"read"}'`,
    ...examples(context, started, tokenCommand),
    ""
  ].join("\n")
}

/**
 * Prints the banner when built, i.e. after the components it is provided with: the text is
 * rendered then, not when the layer is defined, so components that failed to start are known.
 */
export const layer = (context: Context, components: ReadonlyArray<Component>): Layer.Layer<never> =>
  Layer.effectDiscard(Effect.suspend(() => Console.log(text(context, components))))

