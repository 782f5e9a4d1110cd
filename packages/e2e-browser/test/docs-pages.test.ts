/**
 * Every service's API docs, as a person opens them: each service started as in production (its
 * own process, env configuration, a real database), its Swagger UI (`/docs`) and ReDoc
 * (`/redoc`) pages loaded in headless Chromium. A page passes when it renders every operation
 * of the service's own `/openapi.json` and nothing goes wrong on the way: no console error, no
 * uncaught exception, no failed request or error status, and no request to another host (the
 * pages must work behind a closed network; such requests are refused as one would).
 *
 * Screenshots: `artifacts/e2e-browser/<service>-docs.png` and `-redoc.png` (ignored by git).
 */
import { Testing } from "@rec/db"
import { Chromium, DocsPage, Platform } from "@rec/e2e-browser"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const chromiumSkip = Chromium.skipReason()
// PostgreSQL when it answers (always in CI), else PGlite: the pages need the services, not a given store.
const postgres = chromiumSkip === undefined && (await Testing.postgresSkipReason()) === undefined

const artifacts = Path.join(Platform.repoRoot, "artifacts", "e2e-browser")

const title = `API docs pages in Chromium${chromiumSkip === undefined ? "" : ` (skipped: ${chromiumSkip})`}`

describe.skipIf(chromiumSkip !== undefined)(title, () => {
  let scope: Scope.CloseableScope | undefined
  let browser: Chromium.Browser | undefined
  const running = new Map<string, Platform.RunningService>()

  beforeAll(async () => {
    Fs.mkdirSync(artifacts, { recursive: true })
    scope = await Effect.runPromise(Scope.make())
    // Both at once; both settled before failing, so afterAll can close whatever did start.
    const [services, launched] = await Promise.allSettled([
      Effect.runPromise(Platform.start({ postgres }).pipe(Scope.extend(scope))),
      Chromium.launch(Chromium.findExecutable()!)
    ])
    if (launched.status === "fulfilled") browser = launched.value
    if (services.status === "rejected") throw services.reason
    if (launched.status === "rejected") throw launched.reason
    for (const service of services.value) running.set(service.entry.name, service)
    console.log(
      "started: " + services.value.map((s) => `${s.entry.name} ${(s.startMillis / 1000).toFixed(1)} s (${s.database})`).join(", ")
    )
  }, 300_000)

  afterAll(async () => {
    await browser?.close()
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  const openapi = async (service: Platform.RunningService): Promise<ReadonlyArray<DocsPage.Operation>> => {
    const response = await fetch(`${service.docsBase}/openapi.json`)
    expect(response.status).toBe(200)
    const operations = DocsPage.operationsOf(await response.json())
    expect(operations.length, `${service.entry.name} documents no operation`).toBeGreaterThan(0)
    return operations
  }

  /** Opens `path` of the service in a new tab, runs `check`, saves a screenshot, fails on any problem. */
  const onPage = async (
    service: Platform.RunningService,
    path: string,
    screenshot: string,
    check: (page: import("playwright-core").Page) => Promise<void>
  ) => {
    const page = await browser!.context.newPage()
    try {
      const watched = await DocsPage.watch(page, service.url)
      const response = await page.goto(`${service.docsBase}${path}`, { waitUntil: "load", timeout: 60_000 })
      expect(response?.status()).toBe(200)
      await check(page)
      // Late requests (images, fonts) count too.
      await page.waitForLoadState("networkidle", { timeout: 15_000 }).catch(() => undefined)
      await page.screenshot({ path: Path.join(artifacts, screenshot) })
      expect(watched.problems, `problems on ${service.entry.name} ${path}`).toEqual([])
    } finally {
      await page.close()
    }
  }

  // The checks below pass only if these detectors work: a page with each kind of fault must fail.
  it("a page with a remote asset, a console error, an uncaught exception and a 404 shows four problems", async () => {
    const server = Http.createServer((request, response) => {
      if (request.url === "/") {
        response.writeHead(200, { "content-type": "text/html" })
        response.end(`<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>
          <img src="https://cdn.example.invalid/logo.svg"><img src="/missing.png">
          <script>console.error("broken on purpose")</script><script>throw new Error("thrown on purpose")</script>
        </body></html>`)
      } else {
        response.writeHead(404).end()
      }
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const page = await browser!.context.newPage()
    try {
      const watched = await DocsPage.watch(page, origin)
      await page.goto(`${origin}/`, { waitUntil: "load" })
      await page.waitForLoadState("networkidle", { timeout: 15_000 }).catch(() => undefined)
      const problems = watched.problems.join("\n")
      expect(problems).toContain("request to another host: https://cdn.example.invalid/logo.svg")
      expect(problems).toContain(`HTTP 404: GET ${origin}/missing.png`)
      expect(problems).toContain("console error: broken on purpose")
      expect(problems).toContain("uncaught exception: thrown on purpose")
    } finally {
      await page.close()
      server.close()
    }
  }, 60_000)

  describe.concurrent.each(Platform.services.map((entry) => [entry.name, entry] as const))("%s", (name, entry) => {
    it(`${entry.docsPrefix}/docs (Swagger UI) renders every operation of /openapi.json`, async () => {
      const service = running.get(name)!
      const expected = DocsPage.expectedSwaggerBlocks(await openapi(service))
      await onPage(service, "/docs", `${name}-docs.png`, async (page) => {
        expect(await DocsPage.swaggerBlocks(page, expected.length)).toEqual(expected)
      })
    }, 120_000)

    it(`${entry.docsPrefix}/redoc (ReDoc) renders every operation of /openapi.json`, async () => {
      const service = running.get(name)!
      const operations = await openapi(service)
      await onPage(service, "/redoc", `${name}-redoc.png`, async (page) => {
        const rendered = await DocsPage.redocOperations(page, operations.length)
        expect(rendered.map((section) => section.operationId).sort()).toEqual(
          operations.map((op) => op.operationId).sort()
        )
        // Each section shows its operation's path (ReDoc's endpoint box).
        for (const op of operations) {
          const section = rendered.find((s) => s.operationId === op.operationId)
          expect(section?.text, `${op.method} ${op.path}`).toContain(op.path)
        }
      })
    }, 120_000)
  })
})
