/**
 * Browser tests of the platform: Debian's Chromium driven by `playwright-core` against every
 * service started as in production. `test/docs-pages.test.ts` is the suite; these modules are
 * its parts, usable by other browser tests.
 */
export * as Chromium from "./Chromium.js"
export * as DocsPage from "./DocsPage.js"
export * as Platform from "./Platform.js"
export * as ServiceProcess from "./ServiceProcess.js"
