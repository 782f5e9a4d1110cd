import { project } from "../../vitest.shared.js"

export default project("@rec/participant-gateway-service", import.meta.url)
