import { project } from "../../vitest.shared.js"

export default project("@rec/flexibility-service", import.meta.url)
