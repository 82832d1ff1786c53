/** `npm start`: the service on the configured profile. */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Serve } from "../layers/Main.ts"
import { reportFailure } from "./cli/Failure.ts"
import { AppConfig } from "./config/AppConfig.ts"

Layer.launch(Serve).pipe(Effect.provide(AppConfig.layer), reportFailure, NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true }))
