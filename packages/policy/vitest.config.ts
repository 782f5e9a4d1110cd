import { project } from "../../vitest.shared.js"

export default project("@rec/policy", import.meta.url)
