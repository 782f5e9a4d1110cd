import { defineConfig } from "vitest/config"

// One Vitest project per workspace package (each has its own vitest.config.ts).
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "services/*/vitest.config.ts"]
  }
})
