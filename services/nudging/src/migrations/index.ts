/** The nudging service's migrations, in order (static imports: they work from `dist/`). */
import m0001 from "./0001_create_nudging.js"

export const service = "nudging"

export const migrations = {
  "0001_create_nudging": m0001
}
