import m0001 from "./0001_create_assistant.js"

export const migrations = {
  "0001_create_assistant": m0001
}
