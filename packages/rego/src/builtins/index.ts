// Every builtin family. To add a family, create `src/builtins/<family>.ts` exporting a
// `BuiltinDef[]` and list it here.

import { aggregates } from "./aggregates.js"
import { comparison } from "./comparison.js"
import { numbers } from "./numbers.js"
import { print } from "./print.js"
import { BuiltinRegistry, type BuiltinDef } from "./registry.js"
import { sets } from "./sets.js"

export const families: ReadonlyArray<readonly BuiltinDef[]> = [comparison, numbers, sets, aggregates, print]

/** A registry with every builtin this engine provides. */
export const defaultBuiltins = (): BuiltinRegistry => new BuiltinRegistry(families)

export * from "./registry.js"
