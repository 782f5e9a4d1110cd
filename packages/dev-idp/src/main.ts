/**
 * The dev identity provider as its own process: `node packages/dev-idp/dist/main.js`
 * (`pnpm --filter @rec/dev-idp start`). Configured by env vars only (see `Config.ts`).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { Banner } from "./Banner.js"
import { DevIdp } from "./DevIdp.js"

Banner.pipe(Layer.provide(DevIdp.layerConfig({ standalone: true })), Layer.launch, NodeRuntime.runMain)
