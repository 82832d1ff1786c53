/** A runner that cannot take its place in the cluster stops start-up, naming the variable to fix. */
import { createServer } from "node:net"
import { describe, expect, it } from "vitest"
import { clusterDatabase, clusterSkipReason } from "../support/ClusterNodes.ts"
import { freePort, runEngram, TEST_WEBHOOK_KEY, withDataDir } from "../support/Process.ts"

/** A server-profile node's settings on `databaseUrl`, its runner on `runnerPort`. */
const serverEnv = async (dataDir: string, databaseUrl: string, runnerPort: number) => ({
  DATA_DIR: dataDir,
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.REDIS_URL!,
  WEBHOOK_SECRET_KEY: TEST_WEBHOOK_KEY,
  HOST: "127.0.0.1",
  PORT: String(await freePort()),
  RUNNER_HOST: "127.0.0.1",
  RUNNER_PORT: String(runnerPort)
})

describe.skipIf(clusterSkipReason !== undefined)("runner start-up", () => {
  it("a RUNNER_PORT that is taken stops start-up, naming RUNNER_PORT", async () => {
    const database = await clusterDatabase()
    const taken = createServer()
    const port = await freePort()
    await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve))
    try {
      await withDataDir(async (dataDir) => {
        const result = await runEngram(["serve"], await serverEnv(dataDir, database.url, port))
        expect(result.code).toBe(1)
        expect(result.stderr).toContain(`cannot listen for other runners on 127.0.0.1:${port} (RUNNER_PORT)`)
      })
    } finally {
      taken.close()
      await database.drop()
    }
  }, 120_000)

  it("the server profile without WEBHOOK_SECRET_KEY stops start-up, naming it", async () => {
    const database = await clusterDatabase()
    try {
      await withDataDir(async (dataDir) => {
        const { WEBHOOK_SECRET_KEY: _, ...withoutKey } = await serverEnv(dataDir, database.url, await freePort())
        const result = await runEngram(["serve"], withoutKey)
        expect(result.code).toBe(1)
        expect(result.stderr).toContain("the server profile needs WEBHOOK_SECRET_KEY")
        expect(result.stdout).not.toContain("listening")
      })
    } finally {
      await database.drop()
    }
  }, 120_000)

  it("a RUNNER_PORT that is not a port stops start-up, naming it", async () => {
    await withDataDir(async (dataDir) => {
      const result = await runEngram(["serve"], { DATA_DIR: dataDir, RUNNER_PORT: "ninety" })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("RUNNER_PORT")
    })
  }, 120_000)
})
