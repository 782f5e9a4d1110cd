import { project } from "../../vitest.shared.js"

export default project("@rec/faults", import.meta.url)
