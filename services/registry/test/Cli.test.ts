/**
 * `registry validate|import|export` against the running service: readable problems with their
 * positions, the exit codes, export to stdout and to a file.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { Cli } from "@rec/registry-service"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { communityKey, exampleFile, exampleText, serviceLayer, tokens } from "./helpers.js"

const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-cli-"))
const write = (name: string, text: string) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

/** Runs the CLI in-process with captured output. */
const cli = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(async () => {
    let out = ""
    let err = ""
    const code = await Cli.run(argv, {
      out: (text) => (out += text),
      err: (text) => (err += text),
      env,
      readFile: (file) => fs.readFileSync(file),
      writeFile: (file, text) => fs.writeFileSync(file, text)
    })
    return { code, out, err }
  })

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("registry CLI", (it) => {
  it.effect("validate: ok with what an import would do (exit 0), every problem with its place (exit 1)", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      const ok = yield* cli(["validate", exampleFile, "--url", url, "--token", token])
      expect(ok).toEqual({ code: 0, out: "ok: it-energy-community with 7 members, 15 assets (7 meters), 3 sites (a new community)\n", err: "" })
      const broken = write("broken.yaml", exampleText.replace("role: producer", "role: owner").replace("rated_power: 6\n", "rated_powr: 6\n"))
      const invalid = yield* cli(["validate", broken, "--url", url], { REGISTRY_TOKEN: token })
      expect(invalid.code).toBe(Cli.ExitCode.invalid)
      expect(invalid.out).toBe("")
      expect(invalid.err).toBe(
        `${broken} members.member-comune-arco.role: expected one of producer, consumer, prosumer, got "owner" [schema]\n` +
          `warning: ${broken} members.member-giulia-romano.assets.pv.member-giulia-romano-pv.rated_powr: unknown property "rated_powr" kept as extra data (did you mean "rated_power"?) [unknown-property]\n` +
          `${broken}: 1 problem; the bundle would not be imported\n`
      )
      const yaml = write("syntax.yaml", "community: [a,\nmembers: {}\n")
      const syntax = yield* cli(["validate", yaml, "--url", url, "--token", token])
      expect(syntax.code).toBe(Cli.ExitCode.invalid)
      expect(syntax.err).toMatch(new RegExp(`^${yaml}:2:\\d+ \\(bundle\\): invalid YAML: .+ \\[yaml\\]\\n`))
    }))

  it.effect("import: counts (exit 0); a refused bundle lists its problems (exit 1); export writes the bundle", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      const env = { REGISTRY_URL: url, REGISTRY_TOKEN: token }
      const imported = yield* cli(["import", exampleFile], env)
      expect(imported).toEqual({ code: 0, out: "imported it-energy-community: 7 members, 15 assets (7 meters), 3 sites (new)\n", err: "" })
      const again = yield* cli(["import", exampleFile, "--json"], env)
      expect(again.code).toBe(0)
      expect(JSON.parse(again.out)).toMatchObject({ community: communityKey, replaced: { members: 7 } })
      const refused = yield* cli(["import", write("dangling.yaml", exampleText.replace("area: arco\n", "area: trento\n"))], env)
      expect(refused.code).toBe(Cli.ExitCode.invalid)
      expect(refused.err).toContain("members.member-giulia-romano.area: area \"trento\" is not an area of the community (areas: arco, nago-torbole, riva-del-garda) [dangling-reference]")
      expect(refused.err).toContain("The bundle has 1 problem; nothing was imported")
      const exported = yield* cli(["export", communityKey], env)
      expect(exported.code).toBe(0)
      expect(exported.out).toContain("community:\n  id: it-energy-community\n")
      const file = path.join(dir, "export.yaml")
      const toFile = yield* cli(["export", communityKey, "-o", file], env)
      expect(toFile).toEqual({ code: 0, out: "", err: `exported it-energy-community to ${file}\n` })
      expect(fs.readFileSync(file, "utf8")).toBe(exported.out)
      const roundTrip = yield* cli(["import", file], env)
      expect(roundTrip.code).toBe(0)
      expect((yield* cli(["export", communityKey], env)).out).toBe(exported.out)
    }))

  it.effect("refusals and failures have their own exit codes and readable reasons", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      const viewer = yield* Effect.flatMap(tokens, (mint) => mint("viewer"))
      const admin = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      expect(yield* cli(["validate", exampleFile, "--url", url])).toEqual({
        code: Cli.ExitCode.refused,
        out: "",
        err: "registry answered 401: Missing bearer token\nhint: pass an admin's access token with --token or REGISTRY_TOKEN\n"
      })
      expect((yield* cli(["import", exampleFile, "--url", url, "--token", viewer])).err)
        .toBe("registry answered 403: Not allowed: only admins may export, validate or import bundles\n")
      expect(yield* cli(["export", "nope", "--url", url, "--token", admin])).toMatchObject({
        code: Cli.ExitCode.refused,
        err: "registry answered 404: No community \"nope\" in the registry\n"
      })
      const bomb = write("bomb.yaml", "[".repeat(10_000))
      expect(yield* cli(["validate", bomb, "--url", url, "--token", admin])).toMatchObject({
        code: Cli.ExitCode.refused,
        err: "registry answered 400: The bundle nests YAML collections deeper than 64 levels (line 1), the most this service accepts\n"
      })
      expect((yield* cli(["validate", exampleFile, "--url", "http://127.0.0.1:1", "--token", admin])).code).toBe(Cli.ExitCode.unavailable)
    }))

  it.effect("usage errors exit 2 with the usage", () =>
    Effect.gen(function*() {
      for (const argv of [[], ["frobnicate"], ["validate"], ["export"], ["validate", "a", "b"], ["import", "x", "-o", "y"], ["validate", "x", "--url", "ftp://x"], ["validate", "x", "--bogus"]]) {
        const result = yield* cli(argv)
        expect(result.code, argv.join(" ")).toBe(Cli.ExitCode.usage)
        expect(result.err, argv.join(" ")).toContain("usage: registry <command>")
      }
      const missing = yield* cli(["validate", path.join(dir, "no-such-file.yaml")])
      expect(missing).toMatchObject({ code: Cli.ExitCode.usage, err: `registry: cannot read ${path.join(dir, "no-such-file.yaml")}: ENOENT\n` })
      expect((yield* cli(["--help"])).code).toBe(0)
    }))
})
