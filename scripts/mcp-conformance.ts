/**
 * `npm run test:conformance [-- scenario ...]`: the public MCP conformance suite against a
 * fresh `engram serve` (scripts/McpConformance.ts). Exit 0 when every scenario passed, 1 when
 * one failed, 2 when the suite cannot run here (not linux-x64, npm registry unreachable).
 */
import { runConformance, SCENARIOS, summary } from "./McpConformance.ts"

const started = Date.now()
const requested = process.argv.slice(2).filter((a) => !a.startsWith("-"))
const outcome = await runConformance({ scenarios: requested.length > 0 ? requested : SCENARIOS })
const seconds = ((Date.now() - started) / 1000).toFixed(1)

if (outcome._tag === "Unavailable") {
  console.error(`\nMCP conformance cannot run on this machine: ${outcome.reason}`)
  process.exit(2)
}
console.log(`\n=== MCP conformance (${outcome.suiteVersion}, Node ${outcome.nodeVersion}), ${seconds} s ===\n${summary(outcome)}`)
console.log(outcome.passed ? "All scenarios passed." : "Some scenarios FAILED.")
process.exit(outcome.passed ? 0 : 1)
