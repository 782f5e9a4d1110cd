import { project } from "../../vitest.shared.js"

export default project("@rec/grid-gateway-service", import.meta.url)
