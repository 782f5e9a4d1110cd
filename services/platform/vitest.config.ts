import { project } from "../../vitest.shared.js"

export default project("@rec/launcher", import.meta.url)
