import { ServiceKit } from "@rec/platform"
import { Service } from "./Config.js"
import * as Http from "./Http.js"

ServiceKit.run(Http.make(), Service)
