import { project } from "../../vitest.shared.js"

export default project("@rec/platform", import.meta.url)
