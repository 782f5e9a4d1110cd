import { ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as v8 from "node:v8"
import { heapGrowingPercent, Service } from "./Config.js"
import { HttpLive } from "./Http.js"

// Before the first request: a garbage collector that grows the heap less between full
// collections (`Config.heapGrowingPercent`). A wrong value stops the start (the kit's check).
const percent = Effect.runSync(Effect.orElseSucceed(heapGrowingPercent, () => 0))
if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`)

ServiceKit.run(HttpLive, Service)
