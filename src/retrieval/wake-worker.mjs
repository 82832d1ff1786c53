// The wake thread's entry: the sources are TypeScript, run through tsx as the main thread runs them.
import { register } from "tsx/esm/api"

register()
await import("./WakeWorker.ts")
