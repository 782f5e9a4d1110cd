import { project } from "../../vitest.shared.js"

export default project("@rec/dev-idp", import.meta.url)
