#!/usr/bin/env node
// Runs the bundle `npm install` built (dist/, scripts/build.mjs) while it is
// newer than every source; otherwise the TypeScript sources directly, through tsx.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { setFlagsFromString } from "node:v8"
import { bundleIsCurrent } from "./sources.mjs"

// PGlite's WebAssembly runs on V8's baseline compiler (Liftoff) only. By default V8 recompiles each PostgreSQL
// function that turns warm with its optimizing compiler, in background threads: on a fresh node that is seconds of
// CPU that its first writes compete with on two cores, and the optimized code stays resident. Measured
// (docs/footprint.md): those threads' CPU over a node's start and first 500 long turns 5.3-6.6 s -> 3.1-3.3 s;
// idle after a restart 312 -> 261 MB (one run each); bench:locomo's recall identical, its retrieve latency within
// its noise. Liftoff covers every instruction on x64 and arm64; elsewhere V8's default stays. Set before PGlite
// compiles its module.
if (process.arch === "x64" || process.arch === "arm64") {
  setFlagsFromString("--liftoff-only")
  // src/retrieval/VectorKernel.ts compiles its small module with the optimizing compiler, then puts this back.
  globalThis[Symbol.for("engram.liftoffOnly")] = true
}
// JavaScript is optimized once a function has run four times V8's default budget (67,584) instead of once: the
// optimizing compiler's background threads take seconds of a fresh node's CPU over code that is warm only for a
// moment (compromise in the extraction worker, start-up paths). Measured on a fresh node's 500 long turns
// (docs/footprint.md): 112 -> 120 turns/s and 14.5 -> 13.1 ms of CPU per turn (five alternated runs each); in four
// more, 300 retrieves after them took p50/p95 12.9/20.8 ms before and 12.1/19.2 ms after; bench:locomo's recall is
// identical. Hot code is still optimized, a little later. V8 12 and later (Node 22, 24) have no such flag and say so on stderr at
// every start: there V8's own budget stays.
if (Number(process.versions.v8.split(".")[0]) < 12) setFlagsFromString("--interrupt-budget=270336")
// The JavaScript heap grows by a fifth of what is live after each full collection, not by V8's default (up to
// several times): a recall leaves about 200 KB of garbage, and with the default a node that had just woken a
// 100,000-memory space grew from 464-499 MB to 591-638 MB over 600 recalls, all of it garbage awaiting a full
// collection. Measured on that store (docs/footprint.md): 491-508 MB after 600 recalls, for about 6% more CPU a
// recall and p95 within a few milliseconds. Read by V8 at every collection, so setting it here takes effect.
setFlagsFromString("--heap-growing-percent=20")

const root = join(import.meta.dirname, "..")
const stamp = join(root, "dist", "build.json")

const built = () => process.env.ENGRAM_FROM_SOURCES !== "1" && bundleIsCurrent(root)

if (built()) {
  await import("../dist/engram.mjs")
} else {
  // A bundle older than the sources is a developer's tree after an edit: say so, for the sources through tsx start
  // and wake slower (each worker thread compiles its TypeScript too: a 100,000-memory space woke in 5.7 s, 2.2 s bundled).
  if (process.env.ENGRAM_FROM_SOURCES !== "1" && existsSync(stamp)) {
    process.stderr.write("engram: dist/ is older than the sources, so they run through tsx (slower to start and to wake a space); `npm run build` rebuilds it\n")
  }
  const { register } = await import("tsx/esm/api")
  register()
  await import("../src/cli/main.ts")
}
