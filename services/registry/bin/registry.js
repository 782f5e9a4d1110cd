#!/usr/bin/env node
// Thin launcher so the bin exists before the first build; the CLI lives in src/Cli.ts.
import "../dist/cli-main.js"
