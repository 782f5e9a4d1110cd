import m0001 from "./0001_create_commitments.js"
import m0002 from "./0002_create_opportunity_nudges.js"

/** The service's migrations (`@rec/db`), applied in order in the service's schema. */
export const migrations = {
  "0001_create_commitments": m0001,
  "0002_create_opportunity_nudges": m0002
}
