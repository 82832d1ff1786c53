/**
 * The memory list's `tags` filter over HTTP on both profiles: comma-separated,
 * a memory matches when it carries any of the tags; it combines with the other
 * filters and paging, follows edits of a memory's tags, and malformed values
 * are 422 `validation_error` like the list's other parameters.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

eachProfile("memory list: the tags filter", (it) => {
  it.effect("tags=a,b lists the memories carrying any of them, with the other filters, paging and edits", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = unique("tags")
      const record = (content: string, tags: ReadonlyArray<string>) =>
        call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...(tags.length > 0 ? { tags } : {}) } }).pipe(
          Effect.map((reply) => {
            expect(reply.status, reply.text).toBe(200)
            return reply.body.memories.map((m: { memory_id: string }) => m.memory_id) as Array<string>
          })
        )
      const bees = yield* record("Ines keeps bees on her roof in Porto.", ["garden", "bees"])
      const tomatoes = yield* record("Omar grows tomatoes on his balcony.", ["garden"])
      const cello = yield* record("Tom plays the cello on Sundays.", ["music"])
      const untagged = yield* record("Ana runs a marathon every spring.", [])
      for (const ids of [bees, tomatoes, cello, untagged]) expect(ids.length).toBeGreaterThan(0)

      const list = (query: string) =>
        call("GET", `/v1/spaces/${spaceId}/memories?${query}`, { token: key }).pipe(Effect.map((reply) => {
          expect(reply.status, reply.text).toBe(200)
          return { ids: (reply.body.items as Array<{ id: string }>).map((m) => m.id).sort(), total: reply.body.total as number }
        }))
      const sorted = (...groups: ReadonlyArray<ReadonlyArray<string>>) => groups.flat().sort()

      expect(yield* list("tags=garden")).toEqual({ ids: sorted(bees, tomatoes), total: bees.length + tomatoes.length })
      // Any of them; spaces around a tag and empty pieces are ignored.
      expect((yield* list(`tags=${encodeURIComponent("music, bees,,")}`)).ids).toEqual(sorted(bees, cello))
      expect((yield* list("tags=unknown")).total).toBe(0)
      // Tags are matched exactly (case included), not as substrings.
      expect((yield* list("tags=Garden")).total).toBe(0)
      expect((yield* list("tags=gard")).total).toBe(0)
      // Combined with the text filter, and paged with the filtered total.
      expect((yield* list("tags=garden&q=tomatoes")).ids).toEqual(sorted(tomatoes))
      const firstPage = yield* list("tags=garden&limit=1")
      expect(firstPage.ids).toHaveLength(1)
      expect(firstPage.total).toBe(bees.length + tomatoes.length)
      // Without the filter every memory is listed.
      expect((yield* list("")).total).toBe(bees.length + tomatoes.length + cello.length + untagged.length)

      // The filter reads a memory's current tags and state.
      const patched = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${cello[0]}`, { token: key, json: { tags: ["garden", "music"] } })
      expect(patched.status, patched.text).toBe(200)
      expect((yield* list("tags=garden")).ids).toContain(cello[0])
      const retired = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${tomatoes[0]}`, { token: key, json: { state: "retired" } })
      expect(retired.status, retired.text).toBe(200)
      expect((yield* list("tags=garden")).ids).not.toContain(tomatoes[0])
      expect((yield* list("tags=garden&state=retired")).ids).toEqual([tomatoes[0]])
    }))

  it.effect("malformed tag filters are 422 validation_error naming the parameter", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = unique("tags-bad")
      expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })).status).toBe(201)
      const fifty = Array.from({ length: 50 }, (_, i) => `t${i}`)
      const bad = ["", ",,", "svc:internal", "x".repeat(101), [...fifty, "t50"].join(","), "ok,%00"]
      for (const value of bad) {
        const reply = yield* call("GET", `/v1/spaces/${spaceId}/memories?tags=${value === "ok,%00" ? value : encodeURIComponent(value)}`, { token: key })
        expect(reply.status, `${value.slice(0, 40)}: ${reply.text}`).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
        expect(reply.body.error.message).toContain("tags")
      }
      // Fifty tags, each of a hundred characters, are accepted.
      const widest = Array.from({ length: 50 }, (_, i) => `${i}`.padStart(100, "t")).join(",")
      const ok = yield* call("GET", `/v1/spaces/${spaceId}/memories?tags=${encodeURIComponent(widest)}`, { token: key })
      expect(ok.status, ok.text).toBe(200)
      expect(ok.body.total).toBe(0)
      expect((yield* call("GET", `/v1/spaces/${spaceId}/memories?tags=${encodeURIComponent(fifty.join(","))}`, { token: key })).status).toBe(200)
    }))
})
