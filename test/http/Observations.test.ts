/**
 * Notes collapse the facts behind them: the memory list leaves covered facts
 * out unless prefer_observations is false; a recall lets a note stand in for
 * its facts only where it ranks above them and says them in fewer words, and
 * a receipt says which was left out under `dedup`, and why. Consolidation is not built yet, so the note is
 * written to the store directly; the space picks it up when it is rebuilt.
 */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Duration, Effect, Metric } from "effect"
import { spacesActive } from "../../src/space/SpaceEntity.ts"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const passivated = Effect.gen(function*() {
  for (let waited = 0; waited < 15_000; waited += 250) {
    if ((yield* Metric.value(spacesActive)).value === 0) return
    yield* Effect.sleep(Duration.millis(250))
  }
  return yield* Effect.dieMessage("the space never passivated")
})

eachProfile("notes over facts", (it) => {
  it.effect("retrieve and the list collapse facts behind an active note unless prefer_observations is false", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = `notes-${Date.now()}`
      const put = (content: string) =>
        call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content } }).pipe(
          Effect.map((r) => r.body.memories[0].memory_id as string)
        )
      const first = yield* put("Zara: I signed up for a pottery class on Mondays.")
      const second = yield* put("Zara: My pottery teacher says my bowls are getting better.")
      const third = yield* put("Zara: I also started learning the cello.")
      const sql = yield* SqlClient.SqlClient
      const note = `mem_note_${Date.now()}`
      yield* sql`INSERT INTO memories (id, org_id, space_id, document_id, text, type, state, event_time, source_ids, position, created_at, updated_at)
        SELECT ${note}, org_id, space_id, document_id, 'Zara takes a weekly pottery class on Mondays and her bowls are improving.',
          'note', 'active', event_time, ${[first, second]}::text[], 99, now(), now()
        FROM memories WHERE id = ${first}`
      yield* passivated

      const retrieve = (body: Record<string, unknown>, query = "Zara weekly pottery bowls improving") =>
        call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query, receipt: true, ...body } })
      const receiptOf = (reply: any) => call("GET", `/v1/receipts/${reply.body.receipt_id}`, { token: key }).pipe(Effect.map((r) => r.body))
      // The note ranks above both its facts for this query and says them in fewer words: it stands in for them.
      const collapsed = yield* retrieve({})
      const ids = collapsed.body.results.map((r: any) => r.memory_id)
      expect(ids[0]).toBe(note)
      expect(ids).not.toContain(first)
      expect(ids).not.toContain(second)
      expect(collapsed.body.results[0].memory_type).toBe("note")
      const receipt = yield* receiptOf(collapsed)
      const deduped = receipt.excluded.filter((e: any) => e.reason === "dedup")
      expect(deduped.map((e: any) => e.memory_id).sort()).toEqual([first, second].sort())
      expect(deduped[0].detail).toMatch(new RegExp(`^covered by ${note}, which ranks at or above it \\(score [0-9.]+ against [0-9.]+\\) in \\d+ tokens for the \\d+ of its 2 facts$`))

      // Asked what one fact says in its own words, the fact ranks above the note: it stays, and the note (which would
      // only say it again in more words) is left out. A fact is never dropped for a note that ranks below it.
      const signedUp = yield* retrieve({}, "When did Zara sign up for the pottery class on Mondays?")
      const signedIds = signedUp.body.results.map((r: any) => r.memory_id)
      expect(signedIds[0]).toBe(first)
      expect(signedIds).not.toContain(note)
      const signedReceipt = yield* receiptOf(signedUp)
      expect(signedReceipt.excluded.filter((e: any) => e.reason === "dedup").map((e: any) => e.memory_id)).toEqual([note])
      // explain says the same, per memory.
      const explained = yield* call("GET", `/v1/receipts/${collapsed.body.receipt_id}/explain?memory_id=${first}`, { token: key })
      expect(explained.body).toMatchObject({ outcome: "excluded", reason: "dedup", detail: expect.stringContaining(`covered by ${note}`) })
      const noteLeft = yield* call("GET", `/v1/receipts/${signedUp.body.receipt_id}/explain?memory_id=${note}`, { token: key })
      expect(noteLeft.body).toMatchObject({ outcome: "excluded", reason: "dedup", detail: expect.stringContaining("its facts rank above it") })

      const raw = (yield* retrieve({ prefer_observations: false })).body.results.map((r: any) => r.memory_id)
      expect(raw).toEqual(expect.arrayContaining([note, first, second]))
      const notesOnly = (yield* retrieve({ memory_type: ["note"] })).body.results.map((r: any) => r.memory_id)
      expect(notesOnly).toEqual([note])

      const list = (query: string) =>
        callRaw("GET", `/v1/spaces/${spaceId}/memories${query}`, { token: key }).pipe(Effect.map((r) => r.body))
      const listed = yield* list("")
      expect(listed.items.map((m: any) => m.id).sort()).toEqual([note, third].sort())
      expect(listed.total).toBe(2)
      const all = yield* list("?prefer_observations=false")
      expect(all.total).toBe(4)
      expect((yield* list("?type=fact")).items.map((m: any) => m.id)).toEqual([third])
      expect((yield* list("?type=fact&prefer_observations=false")).total).toBe(3)

      // A retired note no longer hides its facts.
      expect((yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${note}`, { token: key, json: { state: "retired" } })).status).toBe(200)
      expect((yield* list("")).total).toBe(3)
      const afterRetire = (yield* retrieve({}, "Zara pottery class")).body.results.map((r: any) => r.memory_id)
      expect(afterRetire).toEqual(expect.arrayContaining([first, second]))
    }))
}, { spaceIdleTime: Duration.seconds(1) })
