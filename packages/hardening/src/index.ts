export * as FuzzReport from "./FuzzReport.js"
export * as JwtAttacks from "./JwtAttacks.js"
export * as SecretScan from "./SecretScan.js"
