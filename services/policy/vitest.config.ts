import { project } from "../../vitest.shared.js"

export default project("@rec/policy-service", import.meta.url)
