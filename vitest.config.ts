import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"]
  }
})
