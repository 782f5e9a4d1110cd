/** Entry point of the `registry` binary (`bin/registry.js`); the commands are in `Cli.ts`. */
import { processIo, run } from "./Cli.js"

process.exitCode = await run(process.argv.slice(2), processIo)
