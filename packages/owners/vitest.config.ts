import { project } from "../../vitest.shared.js"

export default project("@rec/owners", import.meta.url)
