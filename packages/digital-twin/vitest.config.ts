import { project } from "../../vitest.shared.js"

export default project("@rec/digital-twin", import.meta.url)
