import { project } from "../../vitest.shared.js"

export default project("@rec/registry-service", import.meta.url)
