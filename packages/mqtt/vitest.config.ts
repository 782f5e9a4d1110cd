import { project } from "../../vitest.shared.js"

export default project("@rec/mqtt", import.meta.url)
