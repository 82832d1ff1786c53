// A wake thread that takes its jobs and never answers: the wake must not wait for it forever.
import { parentPort } from "node:worker_threads"

parentPort?.on("message", () => {})
