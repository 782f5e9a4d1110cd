/** The nudging service's migrations, in order (static imports: they work from `dist/`). */
import m0001 from "./0001_create_nudging.js"
import m0002 from "./0002_admit_procedural.js"

export const service = "nudging"

export const migrations = {
  "0001_create_nudging": m0001,
  "0002_admit_procedural": m0002
}
