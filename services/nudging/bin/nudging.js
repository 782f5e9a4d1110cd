#!/usr/bin/env node
// Thin launcher so the bin exists before the first build; the CLI lives in src/cli.ts.
import "../dist/cli.js"
