// Every builtin family. To add a family, create `src/builtins/<family>.ts` exporting a
// `BuiltinDef[]` and list it here.

import { aggregates } from "./aggregates.js"
import { arrays } from "./arrays.js"
import { aws } from "./aws.js"
import { comparison } from "./comparison.js"
import { cryptoBuiltins } from "./crypto.js"
import { encoding } from "./encoding.js"
import { globs } from "./glob.js"
import { globsMatch } from "./globs.js"
import { jsonSchema } from "./jsonschema.js"
import { templates } from "./template.js"
import { jwt } from "./jwt.js"
import { graphqlBuiltins } from "./graphql.js"
import { numbers } from "./numbers.js"
import { objects } from "./objects.js"
import { print } from "./print.js"
import { regex } from "./regex.js"
import { regoBuiltins } from "./rego.js"
import { bits } from "./bits.js"
import { graph } from "./graph.js"
import { net } from "./net.js"
import { runtime } from "./runtime.js"
import { semver } from "./semver.js"
import { units } from "./units.js"
import { uuid } from "./uuid.js"
import { BuiltinRegistry, type BuiltinDef } from "./registry.js"
import { sets } from "./sets.js"
import { stringBuiltins } from "./strings.js"
import { testSleep, timeBuiltins } from "./time.js"
import { types } from "./types.js"

export const families: ReadonlyArray<readonly BuiltinDef[]> = [
  comparison,
  numbers,
  sets,
  aggregates,
  arrays,
  objects,
  stringBuiltins,
  regex,
  globs,
  globsMatch,
  jsonSchema,
  templates,
  types,
  encoding,
  timeBuiltins,
  units,
  bits,
  semver,
  uuid,
  runtime,
  net,
  graph,
  regoBuiltins,
  graphqlBuiltins,
  aws,
  jwt,
  cryptoBuiltins,
  print
]

/** A registry with every builtin this engine provides. */
export const defaultBuiltins = (): BuiltinRegistry => new BuiltinRegistry(families)

/**
 * Builtins that exist for policy tests only (OPA has them in its test harness): `test.sleep`.
 * `rego test` and the conformance runner add them; a production host should not.
 */
export const testBuiltins: readonly BuiltinDef[] = [testSleep]

/** The default registry with the test builtins: for running policy tests. */
export const testingBuiltins = (): BuiltinRegistry => defaultBuiltins().with(...testBuiltins)

export * from "./registry.js"
