// A wake thread that dies on the first job it is given: the space must still wake, its index built on the main thread.
import { parentPort } from "node:worker_threads"

parentPort?.on("message", () => process.exit(3))
