#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx: no build step between `npm install` and `engram`.
import { register } from "tsx/esm/api"

register()
await import("../src/cli/main.ts")
