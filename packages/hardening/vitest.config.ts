import { project } from "../../vitest.shared.js"

export default project("@rec/hardening", import.meta.url)
