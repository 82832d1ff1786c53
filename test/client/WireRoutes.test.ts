/**
 * The wire types (src/client/Wire.ts) that type the console's calls and the
 * tests' `call()`: the generated route table matches the contract, and the
 * types refuse what the contract does not have. The `@ts-expect-error` lines
 * are checked by `npm run typecheck` (CI's second step): were a wrong path or
 * body accepted, the directive itself would be the error.
 */
import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { EngramApi } from "../../src/domain/Api.ts"
import type { RouteOf, WireAnswer, WireBody } from "../../src/client/Wire.ts"
import { renderWireRoutes } from "../../src/client/WireRoutesSource.ts"
import { call } from "../support/Http.ts"

describe("wire routes", () => {
  it("src/client/WireRoutes.ts is what `npm run gen:wire` makes from the contract today", async () => {
    const current = readFileSync(new URL("../../src/client/WireRoutes.ts", import.meta.url), "utf8")
    expect(current).toBe(await renderWireRoutes())
  })

  it("names every operation of the HttpApi once, and the raw routes beside it", async () => {
    const text = await renderWireRoutes()
    const operations: Array<string> = []
    HttpApi.reflect(EngramApi, { onGroup: () => {}, onEndpoint: ({ endpoint, group }) => void operations.push(`${group.identifier}.${endpoint.name}`) })
    for (const operation of operations) {
      const [group, name] = operation.split(".")
      expect(text.split(`readonly operation: readonly ["${group}", "${name}"]`).length - 1, operation).toBe(1)
    }
    for (const raw of ["POST /v1/chat/completions", "POST /v1/responses", "POST /v1/messages", "POST /mcp", "POST /oauth/token"]) {
      expect(text).toContain(`"${raw}": { readonly raw: true }`)
    }
  })

  it("resolves template paths and query strings to their routes; refuses what the contract lacks", () => {
    const spaceId: string = "s"
    const route: RouteOf<"GET", `/v1/spaces/${typeof spaceId}/memories?limit=3`> = "GET /v1/spaces/:space_id/memories"
    const body: WireBody<"POST", "/v1/retrieve"> = { space_id: spaceId, query: "Where does Ines live?", limit: 3 }
    // @ts-expect-error: retrieve takes `query`, not `q`
    const misnamed: WireBody<"POST", "/v1/retrieve"> = { space_id: spaceId, q: "Where does Ines live?" }
    const answer = (json: WireAnswer<"POST", "/v1/retrieve">) => json.results.map((result) => result.memory_id)
    // @ts-expect-error: a retrieve answers `results`, not `memories`
    const wrongAnswer = (json: WireAnswer<"POST", "/v1/retrieve">) => json.memories
    // @ts-expect-error: there is no such route
    const missing = () => call("POST", "/v1/recall", { json: { space_id: spaceId } })
    // @ts-expect-error: /v1/record takes POST only
    const wrongMethod = () => call("PUT", "/v1/record", { json: { space_id: spaceId, content: "x" } })
    // @ts-expect-error: a record needs its content
    const incomplete = () => call("POST", "/v1/record", { json: { space_id: spaceId } })
    const offContract = () => call("POST", "/v1/record", { offContract: { space_id: spaceId } })
    expect(route).toBe("GET /v1/spaces/:space_id/memories")
    expect(body.query).toBe("Where does Ines live?")
    // The refused forms are for the type-checker only; none of them runs.
    void [misnamed, answer, wrongAnswer, missing, wrongMethod, incomplete, offContract]
  })
})
