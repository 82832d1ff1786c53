import { describe, expect, it } from "@effect/vitest"
import { resolveRelativeDates } from "../../src/ingestion/RelativeDates.ts"
import { queryDates } from "../../src/retrieval/QueryDates.ts"

const november = Date.UTC(2026, 10, 28, 12)
const iso = (spans: ReadonlyArray<{ start: number; end: number }>) => spans.map((s) => [new Date(s.start).toISOString(), new Date(s.end).toISOString()])

describe("the times a query names", () => {
  it("resolves a bare month the way the fact that answers it was resolved", () => {
    const fact = resolveRelativeDates("I'm travelling to Japan in September.", new Date(november - 7 * 86_400_000))
    const asked = queryDates("Where am I travelling in September?", november)
    expect(iso(asked)).toEqual([[fact.start!.toISOString(), fact.end!.toISOString()]])
    expect(iso(asked)).toEqual([["2027-09-01T00:00:00.000Z", "2027-09-30T23:59:59.999Z"]])
    // Asked of the past, the last September.
    expect(iso(queryDates("Where did I travel in September?", november))).toEqual([["2026-09-01T00:00:00.000Z", "2026-09-30T23:59:59.999Z"]])
    // A month with its year is that month, whatever the tense.
    expect(iso(queryDates("What am I doing in March 2024?", november))).toEqual([["2024-03-01T00:00:00.000Z", "2024-03-31T23:59:59.999Z"]])
  })
})
