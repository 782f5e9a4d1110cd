import { project } from "../../vitest.shared.js"

export default project("@rec/auth", import.meta.url)
