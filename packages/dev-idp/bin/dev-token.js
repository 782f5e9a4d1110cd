#!/usr/bin/env node
// Thin launcher so the bin exists before the first build; the CLI lives in src/token-cli.ts.
import "../dist/token-cli.js"
