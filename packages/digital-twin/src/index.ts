export * from "./Api.js"
