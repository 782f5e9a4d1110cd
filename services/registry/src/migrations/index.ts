/** The registry's migrations, in order (static imports: they work from `dist/` and bundles). */
import m0001 from "./0001_create_registry.js"

export const migrations = { "0001_create_registry": m0001 }
