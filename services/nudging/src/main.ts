import { ServiceKit } from "@rec/platform"
import { Service } from "./Config.js"
import { HttpLive } from "./Http.js"

ServiceKit.run(HttpLive, Service)
