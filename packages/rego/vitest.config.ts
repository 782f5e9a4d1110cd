import { project } from "../../vitest.shared.js"

export default project("@rec/rego", import.meta.url)
