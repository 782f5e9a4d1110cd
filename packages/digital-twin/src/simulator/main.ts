/**
 * The digital-twin simulator as its own process: `node packages/digital-twin/dist/simulator/main.js`
 * (`pnpm --filter @rec/digital-twin start`). Configured by env vars only (see `Config.ts`).
 */
import { ServiceKit } from "@rec/platform"
import { layerConfig, Service } from "./Server.js"

ServiceKit.run(layerConfig, Service)
