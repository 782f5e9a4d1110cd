/**
 * `POST /admin/training-materials/sync` against a local git repository made by the test: the
 * first clone, a sync with nothing new, changed, deleted and added Markdown files (old vectors
 * replaced, deleted ones gone), another ref, refusals (unknown or malformed ref, local changes,
 * no repository, another protocol), shared materials visible to every user but deleted by
 * admins only, and the sync at start.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { answerOf, baseUrl, call, chat, serviceLayer, tempDir, tokens } from "./helpers.js"

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", args, {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: "Test", GIT_AUTHOR_EMAIL: "t@example.org", GIT_COMMITTER_NAME: "Test", GIT_COMMITTER_EMAIL: "t@example.org" }
  }).toString().trim()

const write = (dir: string, file: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
  fs.writeFileSync(path.join(dir, file), text)
}

/** A repository with three Markdown files (one under guide/), tagged v1, on branch main. */
const makeRepository = () => {
  const dir = tempDir("training-repo")
  git(dir, "init", "-q", "-b", "main")
  write(dir, "guide/incentives.md", "---\nauthor: test\n---\n# Incentives\n\nThe tariff of the Lakeside community is 118 euro per MWh this year.\n")
  write(dir, "guide/joining.md", "# Joining\n\nTo join the Lakeside community, send the POD code of your meter to the manager.\n")
  write(dir, "faq.md", "# FAQ\n\nThe Lakeside community assembly meets every April in the library.\n")
  write(dir, "README.txt", "Not Markdown: not ingested.")
  git(dir, "add", ".")
  git(dir, "commit", "-q", "-m", "first")
  git(dir, "tag", "v1")
  return dir
}

const sources = (reply: { frames: ReadonlyArray<{ type: string; data: unknown }> }) =>
  (reply.frames.find((f) => f.type === "sources")?.data ?? []) as ReadonlyArray<{ source: string; text: string; metadata: { kind: string } }>

describe("training materials", () => {
  const repository = makeRepository()
  const checkout = path.join(tempDir("training-checkout"), "materials")

  layer(
    serviceLayer({ env: { TRAINING_MATERIALS_REPO: repository, TRAINING_MATERIALS_PATH: checkout, TRAINING_MATERIALS_SYNC_ON_START: "false" } }),
    { excludeTestServices: true, timeout: "90 seconds" }
  )("from a local repository", (it) => {
    const setup = Effect.gen(function*() {
      const mint = yield* tokens
      return { admin: yield* mint("admin"), user: yield* mint("participant"), url: yield* baseUrl }
    })
    const sync = (token: string, json: unknown = {}) => call("POST", "/admin/training-materials/sync", { token, json })

    it.effect("clones, ingests the Markdown files, and every user can search and read them", () =>
      Effect.gen(function*() {
        const { admin, url, user } = yield* setup
        const first = yield* sync(admin)
        expect(first.status).toBe(200)
        const head = git(repository, "rev-parse", "HEAD")
        expect(first.body).toEqual({
          status: "ok",
          git: { repository, path: checkout, target: "origin/main", previous_commit: null, current_commit: head, updated: true },
          ingest: { root: checkout, added: 3, updated: 0, removed: 0, unchanged: 0, chunks: 3 }
        })

        const shared = (yield* call("GET", "/attachments?scope=shared", { token: user })).body as {
          items: ReadonlyArray<{ id: string; filename: string; scope: string; title: string }>
        }
        expect(shared.items.map((a) => [a.filename, a.scope, a.title]).sort()).toEqual([
          ["faq.md", "shared", "FAQ"],
          ["incentives.md", "shared", "Incentives"],
          ["joining.md", "shared", "Joining"]
        ])
        // Not in the user's own list.
        expect(((yield* call("GET", "/attachments", { token: user })).body as { total: number }).total).toBe(0)

        const reply = yield* chat(`${url}/api/chat`, user, { message: "What is the tariff of the Lakeside community?" })
        expect(sources(reply)[0]).toMatchObject({ source: "training-materials://guide/incentives", metadata: { kind: "training_material" } })
        expect(answerOf(reply)).toContain("118 euro per MWh")
        // The front matter is not part of the text.
        expect(JSON.stringify(reply.frames)).not.toContain("author: test")

        const raw = yield* call("GET", `/attachments/${shared.items.find((a) => a.filename === "faq.md")!.id}/raw`, { token: user })
        expect(raw.text).toBe("# FAQ\n\nThe Lakeside community assembly meets every April in the library.\n")
      }))

    it.effect("a second sync with nothing new changes nothing", () =>
      Effect.gen(function*() {
        const { admin } = yield* setup
        const again = yield* sync(admin)
        expect(again.body).toMatchObject({ git: { updated: false }, ingest: { added: 0, updated: 0, removed: 0, unchanged: 3, chunks: 0 } })
      }))

    it.effect("ingests changed files again, removes deleted ones and adds new ones", () =>
      Effect.gen(function*() {
        const { admin, url, user } = yield* setup
        write(repository, "guide/incentives.md", "# Incentives\n\nThe tariff of the Lakeside community is 121 euro per MWh from July.\n")
        fs.rmSync(path.join(repository, "faq.md"))
        write(repository, "guide/batteries.md", "# Batteries\n\nThe Lakeside community battery stores 200 kWh for the evening.\n")
        git(repository, "add", "-A")
        git(repository, "commit", "-q", "-m", "second")

        const reply = yield* sync(admin)
        expect(reply.status).toBe(200)
        expect(reply.body).toMatchObject({
          git: { updated: true, current_commit: git(repository, "rev-parse", "HEAD") },
          ingest: { added: 1, updated: 1, removed: 1, unchanged: 1 }
        })

        const tariff = yield* chat(`${url}/api/chat`, user, { message: "What is the tariff of the Lakeside community?" })
        const all = JSON.stringify(sources(tariff))
        expect(all).toContain("121 euro per MWh")
        expect(all).not.toContain("118 euro per MWh")
        const assembly = yield* chat(`${url}/api/chat`, user, { message: "When does the Lakeside assembly meet in the library?" })
        expect(JSON.stringify(sources(assembly))).not.toContain("every April")
        const battery = yield* chat(`${url}/api/chat`, user, { message: "How much does the Lakeside battery store?" })
        expect(sources(battery)[0].source).toBe("training-materials://guide/batteries")
      }))

    it.effect("checks out another ref on request", () =>
      Effect.gen(function*() {
        const { admin } = yield* setup
        const reply = yield* sync(admin, { target_ref: "v1" })
        expect(reply.status).toBe(200)
        expect(reply.body).toMatchObject({
          git: { target: "v1", current_commit: git(repository, "rev-parse", "v1"), updated: true },
          ingest: { added: 1, updated: 1, removed: 1, unchanged: 1 }
        })
        // Back to the branch for the next tests.
        expect((yield* sync(admin)).status).toBe(200)
      }))

    it.effect("refuses an unknown ref, a malformed one, and a checkout with local changes", () =>
      Effect.gen(function*() {
        const { admin } = yield* setup
        const unknown = yield* sync(admin, { target_ref: "no-such-branch" })
        expect(unknown.status).toBe(422)
        expect(unknown.body).toEqual({ detail: `The ref "no-such-branch" does not exist in the training-materials repository ${repository}` })

        const option = yield* sync(admin, { target_ref: "--upload-pack=touch /tmp/x" })
        expect(option.status).toBe(400)

        write(checkout, "guide/joining.md", "edited by hand")
        const dirty = yield* sync(admin)
        expect(dirty.status).toBe(409)
        expect(dirty.body).toEqual({ detail: `The checkout in ${checkout} has local changes; commit, stash or remove them before syncing` })
        git(checkout, "checkout", "--", "guide/joining.md")
        expect((yield* sync(admin)).status).toBe(200)
      }))

    it.effect("shared materials are deleted by admins only", () =>
      Effect.gen(function*() {
        const { admin, user } = yield* setup
        const shared = (yield* call("GET", "/attachments?scope=shared", { token: user })).body as { items: ReadonlyArray<{ id: string; filename: string }> }
        const joining = shared.items.find((a) => a.filename === "joining.md")!
        const refused = yield* call("DELETE", `/attachments/${joining.id}`, { token: user })
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({ detail: "Shared training materials are managed by the training sync; only administrators may delete them" })
        expect((yield* call("DELETE", `/attachments/${joining.id}`, { token: admin })).status).toBe(200)
        // The next sync brings it back.
        expect(((yield* sync(admin)).body as { ingest: { added: number } }).ingest.added).toBe(1)
      }))
  })

  layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("without a repository", (it) => {
    it.effect("answers 409 naming the setting", () =>
      Effect.gen(function*() {
        const admin = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
        const reply = yield* call("POST", "/admin/training-materials/sync", { token: admin, json: {} })
        expect(reply.status).toBe(409)
        expect(reply.body).toEqual({ detail: "No training-materials repository is configured: set TRAINING_MATERIALS_REPO to a local path or an https URL" })
      }))
  })

  layer(
    serviceLayer({ env: { TRAINING_MATERIALS_REPO: "git@github.com:rec/training.git", TRAINING_MATERIALS_PATH: tempDir("ssh") } }),
    { excludeTestServices: true, timeout: "60 seconds" }
  )("with another protocol", (it) => {
    it.effect("refuses it without running git", () =>
      Effect.gen(function*() {
        const admin = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
        const reply = yield* call("POST", "/admin/training-materials/sync", { token: admin, json: {} })
        expect(reply.status).toBe(409)
        expect(reply.body).toEqual({
          detail: "TRAINING_MATERIALS_REPO (git@github.com:rec/training.git) is neither a local path nor an https URL; other protocols are not allowed"
        })
      }))
  })

  const startRepository = makeRepository()
  layer(
    serviceLayer({ env: { TRAINING_MATERIALS_REPO: startRepository, TRAINING_MATERIALS_PATH: path.join(tempDir("start"), "m") } }),
    { excludeTestServices: true, timeout: "60 seconds" }
  )("at start", (it) => {
    it.effect("syncs in the background when a repository is configured", () =>
      Effect.gen(function*() {
        const user = yield* Effect.flatMap(tokens, (mint) => mint("viewer"))
        let total = 0
        for (let i = 0; i < 100 && total < 3; i++) {
          total = ((yield* call("GET", "/attachments?scope=shared", { token: user })).body as { total: number }).total
          if (total < 3) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
        }
        expect(total).toBe(3)
      }))
  })
})
