/** The participant gateway's migrations, in order (static imports: they work from `dist/`). */
import m0001 from "./0001_create_participant_gateway.js"

export const service = "participant-gateway"

export const migrations = {
  "0001_create_participant_gateway": m0001
}
