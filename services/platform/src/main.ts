import { ServiceKit } from "@rec/platform"
import { Service } from "./Config.js"
import { layerConfig } from "./index.js"

ServiceKit.run(layerConfig, Service)
