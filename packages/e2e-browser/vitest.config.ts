import { project } from "../../vitest.shared.js"

export default project("@rec/e2e-browser", import.meta.url)
