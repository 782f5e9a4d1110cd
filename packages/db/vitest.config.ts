import { project } from "../../vitest.shared.js"

export default project("@rec/db", import.meta.url)
