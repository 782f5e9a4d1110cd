import { project } from "../../vitest.shared.js"

export default project("@rec/nudging-service", import.meta.url)
