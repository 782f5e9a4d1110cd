import { ServiceKit } from "@rec/platform"
import { AlertNudges } from "./AlertNudges.js"
import { Service } from "./Config.js"
import * as Http from "./Http.js"

ServiceKit.run(Http.make({ nudges: AlertNudges.layer }), Service)
