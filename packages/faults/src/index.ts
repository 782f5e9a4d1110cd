export * as PrivateMosquitto from "./PrivateMosquitto.js"
export * as PrivatePostgres from "./PrivatePostgres.js"
export * as Processes from "./Processes.js"
