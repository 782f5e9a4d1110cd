import type { Vitest } from "@effect/vitest"
import type { DevIdp } from "@rec/dev-idp"
import type { Stack } from "./Stack.js"

/** The `it` of a test group run against the stack. */
export type It = Vitest.MethodsNonLive<Stack | DevIdp, true>
