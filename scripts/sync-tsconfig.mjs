#!/usr/bin/env node
// Regenerates the root tsconfigs and every package's project references from package.json.
import { syncPackageTsconfigs, syncRootTsconfigs } from "./workspace.mjs"

syncRootTsconfigs()
syncPackageTsconfigs()
