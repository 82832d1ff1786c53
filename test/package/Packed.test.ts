/**
 * The package as an outside project uses it: `npm pack`, installed into a new
 * project, a consumer file type-checked by plain `tsc` (strict, NodeNext) and
 * a test in it run by `node --test` that starts a node through
 * `engram/testing` and records and retrieves through both clients of
 * `engram/client`. Slow (a few minutes: the types are emitted, the tarball
 * installed from the npm cache); it is the check that `exports`, the bundles
 * and the declarations fit together.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { newestSource } from "../../bin/sources.mjs"

const run = promisify(execFile)
const root = join(import.meta.dirname, "..", "..")
const project = mkdtempSync(join(tmpdir(), "engram-consumer-"))
const versionOf = (name: string): string => JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version

const sh = async (command: string, args: ReadonlyArray<string>, cwd: string) => {
  try {
    return await run(command, [...args], { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, DATABASE_URL: "", REDIS_URL: "" } })
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}: ${failed.message}\n${failed.stdout ?? ""}\n${failed.stderr ?? ""}`)
  }
}

const CONSUMER = `import { test } from "node:test"
import assert from "node:assert/strict"
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { createClient, EngramError, makeEffectClient, type WireBody } from "engram/client"
import { startTestNode } from "engram/testing"

/** Plain fetch, typed by the contract's wire types. */
const retrieveByFetch = async (url: string, key: string, body: WireBody<"POST", "/v1/retrieve">) => {
  const response = await fetch(url + "/v1/retrieve", {
    method: "POST",
    headers: { authorization: "Bearer " + key, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return response.json()
}

test("a node in a test: record and retrieve through both clients", async () => {
  const node = await startTestNode({ env: { CONSOLIDATION: "off" } })
  const engram = createClient({ baseUrl: node.url, apiKey: node.apiKey })
  try {
    const recorded = await engram.record({ space_id: "notes", content: "Alice adopted a beagle named Biscuit in March 2024." })
    assert.equal(recorded.status, "completed")
    const found = await engram.retrieve({ space_id: "notes", query: "What pet does Alice have?", limit: 3 })
    assert.match(found.results[0]!.content, /Biscuit/)
    const refused: unknown = await engram.getSpace("missing").catch((e: unknown) => e)
    assert.ok(refused instanceof EngramError)
    assert.equal(refused.status, 404)
    assert.equal(refused.code, "not_found")
    const typed = await Effect.runPromise(Effect.gen(function*() {
      const client = yield* makeEffectClient({ baseUrl: node.url, apiKey: node.apiKey })
      return yield* client.memories.retrieve({ payload: { space_id: "notes", query: "beagle", limit: 5, mode: "fast" } })
    }).pipe(Effect.provide(FetchHttpClient.layer)))
    assert.match(typed.results[0]!.content, /Biscuit/)
    const fetched = await retrieveByFetch(node.url, node.apiKey, { space_id: "notes", query: "beagle", limit: 3 })
    assert.match(JSON.stringify(fetched), /Biscuit/)
    console.log("consumer: recorded and retrieved through both clients")
  } finally {
    await engram.close()
    await node.stop()
  }
})
`

/** A line that must not type-check: the declarations are real types, not \`any\`. */
const WRONG = `import { createClient, type WireBody } from "engram/client"
const engram = createClient({ baseUrl: "http://127.0.0.1:1", apiKey: "k" })
export const retrieveWithAStringLimit = () => engram.retrieve({ space_id: "notes", query: "q", limit: "3" })
export const misnamed: WireBody<"POST", "/v1/retrieve"> = { space_id: "notes", q: "q" }
`

describe("the packed package", () => {
  afterAll(() => rmSync(project, { recursive: true, force: true }))

  it("installs into a new project, type-checks with plain tsc and runs a test that starts a node", async () => {
    const built = JSON.parse(readFileSync(join(root, "dist", "build.json"), "utf8")).newest_source_ms
    expect(built, "dist/ is older than the sources: run npm run build").toBeGreaterThanOrEqual(newestSource(root))
    await sh("npx", ["tsc", "-p", "tsconfig.lib.json"], root)
    const packed = await sh("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", project], root)
    const [tarball] = JSON.parse(packed.stdout) as Array<{ filename: string; size: number; unpackedSize: number }>
    console.log(`packed ${tarball!.filename}: ${(tarball!.size / 1e6).toFixed(1)} MB, ${(tarball!.unpackedSize / 1e6).toFixed(1)} MB unpacked`)

    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    await sh("npm", [
      "install", "--prefer-offline", "--no-audit", "--no-fund",
      join(project, tarball!.filename), `typescript@${versionOf("typescript")}`, `@types/node@${versionOf("@types/node")}`
    ], project)
    const options = { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, skipLibCheck: true, types: ["node"] }
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: { ...options, outDir: "out" }, files: ["consumer.test.ts"] }))
    writeFileSync(join(project, "consumer.test.ts"), CONSUMER)
    writeFileSync(join(project, "wrong.ts"), WRONG)
    writeFileSync(join(project, "tsconfig.wrong.json"), JSON.stringify({ compilerOptions: { ...options, noEmit: true }, files: ["wrong.ts"] }))

    const tsc = join(project, "node_modules", ".bin", "tsc")
    await sh(tsc, ["-p", "tsconfig.json"], project)
    const wrong = await sh(tsc, ["-p", "tsconfig.wrong.json"], project).then(() => "", (e: Error) => e.message)
    expect(wrong).toMatch(/wrong\.ts\(3,\d+\): error TS2322/)
    expect(wrong).toMatch(/wrong\.ts\(4,\d+\): error TS2353/)

    const tested = await sh(process.execPath, ["--test", join("out", "consumer.test.js")], project)
    expect(tested.stdout).toContain("consumer: recorded and retrieved through both clients")
    expect(tested.stdout).toMatch(/# pass 1\n/)
    expect(tested.stdout).toMatch(/# fail 0\n/)
  }, 600_000)
})
