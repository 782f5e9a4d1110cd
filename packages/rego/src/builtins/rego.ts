// rego.parse_module: parses Rego source into OPA's AST JSON. (rego.metadata.rule/chain are
// compiled to constants of the calling rule: see compiler/metadata.ts.)

import { moduleJSON } from "../astjson.js"
import { RegoCompileError } from "../errors.js"
import { parseModule } from "../parser.js"
import { str } from "./args.js"
import { asBuiltinError, type BuiltinDef } from "./registry.js"

export const regoBuiltins: BuiltinDef[] = [
  {
    name: "rego.parse_module",
    arity: 2,
    fn: ([file, source]) => {
      const f = str(file, 1)
      const s = str(source, 2)
      return asBuiltinError(RegoCompileError, () => moduleJSON(parseModule(f, s)))
    }
  }
]
