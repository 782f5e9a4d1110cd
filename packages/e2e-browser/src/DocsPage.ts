/**
 * What a docs page must show, read from the service's own `/openapi.json`, and what the
 * browser rendered, read from the page: Swagger UI's operation blocks (`.opblock`, one per
 * operation and tag, with its method and `data-path`) and ReDoc's operation sections
 * (`data-section-id="operation/<operationId>"`).
 */
import type { Page } from "playwright-core"

export interface Operation {
  readonly method: string
  readonly path: string
  readonly operationId: string | undefined
  readonly tags: ReadonlyArray<string>
}

const methods = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"])

/** Every operation of an OpenAPI document. */
export const operationsOf = (spec: unknown): ReadonlyArray<Operation> => {
  const paths = (spec as { paths?: Record<string, Record<string, unknown>> }).paths ?? {}
  const out: Array<Operation> = []
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, value] of Object.entries(item)) {
      if (!methods.has(method)) continue
      const operation = value as { operationId?: string; tags?: Array<string> }
      out.push({ method: method.toUpperCase(), path, operationId: operation.operationId, tags: operation.tags ?? [] })
    }
  }
  return out
}

/** `METHOD /path` once per tag: Swagger UI shows an operation under each of its tags ("default" without). */
export const expectedSwaggerBlocks = (operations: ReadonlyArray<Operation>): Array<string> =>
  operations.flatMap((op) => (op.tags.length === 0 ? ["default"] : op.tags).map(() => `${op.method} ${op.path}`)).sort()

/** What went wrong on a page while it loaded and rendered. */
export interface PageWatch {
  /** Console errors, uncaught exceptions, failed requests, error statuses, requests to other hosts. */
  readonly problems: Array<string>
  /** Console warnings (reported, not failures: ReDoc warns about schemas it simplifies). */
  readonly warnings: Array<string>
}

/**
 * Records everything that goes wrong on `page`, and refuses every request to another origin
 * than `origin` (as a closed network would, even on a machine with Internet access), recording
 * it as a problem. Attach before `goto`.
 */
export const watch = async (page: Page, origin: string): Promise<PageWatch> => {
  const result: PageWatch = { problems: [], warnings: [] }
  page.on("console", (message) => {
    const where = message.location().url ? ` (${message.location().url})` : ""
    if (message.type() === "error") result.problems.push(`console error: ${message.text()}${where}`)
    else if (message.type() === "warning") result.warnings.push(message.text())
  })
  page.on("pageerror", (error) => result.problems.push(`uncaught exception: ${error.message}`))
  page.on("requestfailed", (request) => {
    const failure = request.failure()?.errorText ?? "failed"
    // Requests refused below are already recorded with their reason.
    if (!failure.includes("ERR_BLOCKED_BY_CLIENT")) {
      result.problems.push(`request failed: ${request.method()} ${request.url()}: ${failure}`)
    }
  })
  page.on("response", (response) => {
    if (response.status() >= 400) {
      result.problems.push(`HTTP ${response.status()}: ${response.request().method()} ${response.url()}`)
    }
  })
  await page.route("**/*", (route) => {
    const url = route.request().url()
    if (url.startsWith(`${origin}/`) || url === origin) return route.continue()
    result.problems.push(`request to another host: ${url}`)
    return route.abort("blockedbyclient")
  })
  return result
}

/** Waits until `count()` in the page reaches `expected` (or the timeout passes; the caller compares). */
const waitForCount = async (page: Page, selector: string, expected: number, timeout: number): Promise<void> => {
  await page
    // A string runs in the page as is (a function would need the DOM typings here).
    .waitForFunction(`document.querySelectorAll(${JSON.stringify(selector)}).length >= ${expected}`, undefined, {
      timeout,
      polling: 250
    })
    .catch(() => undefined)
}

/** Swagger UI's operation blocks as `METHOD /path`, sorted, once rendering has reached `expected`. */
export const swaggerBlocks = async (page: Page, expected: number, timeout = 60_000): Promise<Array<string>> => {
  await waitForCount(page, ".swagger-ui .opblock", expected, timeout)
  const blocks = await page.$$eval(".swagger-ui .opblock", (elements) =>
    elements.map((block) => {
      const method = block.querySelector(".opblock-summary-method")?.textContent?.trim() ?? "?"
      const path = block.querySelector(".opblock-summary-path")?.getAttribute("data-path") ?? "?"
      return `${method.toUpperCase()} ${path}`
    }))
  return blocks.sort()
}

export interface RedocOperation {
  readonly operationId: string
  /** The section's text: the operation's summary, parameters, responses and its path. */
  readonly text: string
}

/** ReDoc's operation sections, once rendering has reached `expected`. */
export const redocOperations = async (
  page: Page,
  expected: number,
  timeout = 60_000
): Promise<Array<RedocOperation>> => {
  await waitForCount(page, '#redoc [data-section-id^="operation/"]', expected, timeout)
  return page.$$eval('#redoc [data-section-id^="operation/"]', (elements) =>
    elements.map((section) => ({
      operationId: (section.getAttribute("data-section-id") ?? "").slice("operation/".length),
      text: section.textContent ?? ""
    })))
}
