import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { CliConfig, cli } from "./Cli.ts"
import { reportFailure } from "./Failure.ts"

cli(process.argv).pipe(
  Effect.provide(CliConfig),
  Effect.provide(NodeContext.layer),
  reportFailure,
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
