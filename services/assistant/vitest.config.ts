import { project } from "../../vitest.shared.js"

export default project("@rec/assistant-service", import.meta.url)
