/**
 * The public MCP conformance suite (`@modelcontextprotocol/conformance`, under
 * Node 22 from npm) against a real `engram serve` on the embedded profile, as
 * `npm run test:conformance` runs it (scripts/McpConformance.ts). Where the
 * suite cannot run (not linux-x64, npm registry unreachable) the tests are
 * reported as skipped with the reason printed.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { ensureSuite, platformProblem, runConformance, SCENARIOS, type Suite, summary, type Unavailable } from "../../scripts/McpConformance.ts"

const log = (text: string) => void process.stdout.write(text)

const skipped = (reason: string) => `MCP conformance tests skipped: ${reason}`

const platform = platformProblem()
if (platform !== undefined) {
  console.warn(`\n*** ${skipped(platform)} ***\n`)
  describe("MCP conformance suite", () => {
    it.skip(skipped(platform), () => {})
  })
}

if (platform === undefined) describe("MCP conformance suite", () => {
  let suite: Suite | Unavailable = { _tag: "Unavailable", reason: "the suite was not installed" }

  // The first run downloads Node 22 and the suite (about 30 MB) into .cache/mcp-conformance/.
  beforeAll(async () => {
    suite = await ensureSuite(log)
    if (suite._tag === "Unavailable") console.warn(`\n*** ${skipped(suite.reason)} ***\n`)
  }, 900_000)

  it(`passes ${SCENARIOS.join(", ")} against /mcp`, async (context) => {
    if (suite._tag === "Unavailable") return context.skip(skipped(suite.reason))
    const ran = await runConformance({ log })
    if (ran._tag === "Unavailable") return context.skip(skipped(ran.reason))
    console.log(summary(ran))
    expect(ran.results.map((r) => [r.scenario, r.exitCode, r.passed])).toEqual(SCENARIOS.map((s) => [s, 0, true]))
    const statuses = Object.fromEntries(ran.results.flatMap((r) => r.checks.map((c) => [c.id, c.status])))
    expect(statuses).toMatchObject({
      "server-initialize": "SUCCESS",
      "ping": "SUCCESS",
      "tools-list": "SUCCESS",
      "tools-call-error": "SUCCESS",
      "localhost-host-rebinding-rejected": "SUCCESS",
      "localhost-host-valid-accepted": "SUCCESS"
    })
  }, 300_000)

  // The pass-through adds the API key only: with the attacker's origin allowed, Engram serves it and the scenario fails.
  it("fails dns-rebinding-protection when the server allows the rebound origin (MCP_ALLOWED_ORIGINS)", async (context) => {
    if (suite._tag === "Unavailable") return context.skip(skipped(suite.reason))
    // The suite's report of the failure it is meant to find is shown only if this test fails.
    let output = ""
    context.onTestFailed(() => log(output))
    const ran = await runConformance({
      scenarios: ["dns-rebinding-protection"],
      serverEnv: { MCP_ALLOWED_ORIGINS: "http://evil.example.com" },
      log: (text) => void (output += text)
    })
    if (ran._tag === "Unavailable") return context.skip(skipped(ran.reason))
    const [result] = ran.results
    expect(result?.passed).toBe(false)
    expect(result?.exitCode).toBe(1)
    const statuses = Object.fromEntries((result?.checks ?? []).map((c) => [c.id, c.status]))
    expect(statuses).toEqual({ "localhost-host-rebinding-rejected": "FAILURE", "localhost-host-valid-accepted": "SUCCESS" })
  }, 300_000)
})
