/**
 * The memory list's `ids` filter over HTTP on both profiles: the way to read
 * memories known by id, since the spec has no single-memory GET (that path
 * answers 405 to a GET). Comma-separated; it combines with the other filters (state,
 * layer, prefer_observations); another space's ids find nothing; malformed
 * values are 422 `validation_error`.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

eachProfile("memory list: the ids filter", (it) => {
  it.effect("ids=a,b lists exactly those memories, with the state filter, and nothing of another space", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = unique("ids")
      const record = (space: string, content: string) =>
        call("POST", "/v1/record", { token: key, json: { space_id: space, content } }).pipe(
          Effect.map((reply) => {
            expect(reply.status, reply.text).toBe(200)
            return reply.body.memories[0].memory_id as string
          })
        )
      const bees = yield* record(spaceId, "Ines keeps bees on her roof in Porto.")
      const cello = yield* record(spaceId, "Tom plays the cello on Sundays.")
      const marathon = yield* record(spaceId, "Ana runs a marathon every spring.")
      const elsewhere = yield* record(unique("ids-other"), "Omar grows tomatoes on his balcony.")

      const list = (query: string) =>
        call("GET", `/v1/spaces/${spaceId}/memories?${query}`, { token: key }).pipe(Effect.map((reply) => {
          expect(reply.status, reply.text).toBe(200)
          return { ids: (reply.body.items as Array<{ id: string }>).map((m) => m.id).sort(), total: reply.body.total as number }
        }))

      expect(yield* list(`ids=${bees},${cello}`)).toEqual({ ids: [bees, cello].sort(), total: 2 })
      expect((yield* list(`ids=${encodeURIComponent(` ${marathon}, ,`)}`)).ids).toEqual([marathon])
      // An id of another space, or of no memory, finds nothing.
      expect((yield* list(`ids=${elsewhere},mem_nothing`)).total).toBe(0)
      // The list's other filters still apply: a retired memory needs state=retired or all.
      expect((yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${cello}`, { token: key, json: { state: "retired" } })).status).toBe(200)
      expect((yield* list(`ids=${bees},${cello}`)).ids).toEqual([bees])
      expect((yield* list(`ids=${bees},${cello}&state=all`)).ids).toEqual([bees, cello].sort())
      expect((yield* list(`ids=${bees},${cello}&state=retired`)).ids).toEqual([cello])
    }))

  it.effect("there is no single-memory GET, and malformed id filters are 422 validation_error", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = unique("ids-bad")
      const stored = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Ada repairs old clocks." } })
      const id = stored.body.memories[0].memory_id as string
      // The path takes PATCH and DELETE only.
      const single = yield* callRaw("GET", `/v1/spaces/${spaceId}/memories/${id}`, { token: key })
      expect(single.status).toBe(405)
      expect(single.body.error.code).toBe("method_not_allowed")
      expect(single.headers["allow"]?.split(/,\s*/).sort()).toEqual(["DELETE", "PATCH"])
      for (const bad of ["", ",", ",,", Array.from({ length: 101 }, (_, i) => `mem_${i}`).join(","), "x".repeat(257)]) {
        const reply = yield* call("GET", `/v1/spaces/${spaceId}/memories?ids=${encodeURIComponent(bad)}`, { token: key })
        expect(reply.status, bad.slice(0, 40)).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
        expect(reply.body.error.message).toContain("ids")
      }
    }))
})
