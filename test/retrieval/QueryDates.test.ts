import { describe, expect, it } from "@effect/vitest"
import { resolveRelativeDates } from "../../src/ingestion/RelativeDates.ts"
import { queryDates, settleSpans } from "../../src/retrieval/QueryDates.ts"

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

  it("moves a month named without its year, a year at a time, to the nearest one that holds memories", () => {
    const june = (year: number) => [`${year}-06-01T00:00:00.000Z`, `${year}-06-30T23:59:59.999Z`]
    const asked = queryDates("When did Melanie go camping in June?", november)
    expect(iso(asked)).toEqual([june(2026)])
    expect(iso(settleSpans(asked, [Date.UTC(2023, 5, 20), Date.UTC(2023, 6, 2)]))).toEqual([june(2023)])
    // The nearest of several, going back.
    expect(iso(settleSpans(asked, [Date.UTC(2022, 5, 20), Date.UTC(2024, 5, 2)]))).toEqual([june(2024)])
    // None: it stays where the reference put it.
    expect(iso(settleSpans(asked, [Date.UTC(2023, 6, 2)]))).toEqual([june(2026)])
    // Of what is still to come, it moves ahead; a month with its year never moves.
    const coming = queryDates("Where am I travelling in September?", november)
    expect(iso(settleSpans(coming, [Date.UTC(2028, 8, 9)]))).toEqual([["2028-09-01T00:00:00.000Z", "2028-09-30T23:59:59.999Z"]])
    const fixed = queryDates("What did I do in March 2024?", november)
    expect(iso(settleSpans(fixed, [Date.UTC(2023, 2, 9)]))).toEqual([["2024-03-01T00:00:00.000Z", "2024-03-31T23:59:59.999Z"]])
  })

  it("reads a day written out in full as that day and the week before, in place of its whole month", () => {
    const week = [["2022-11-02T00:00:00.000Z", "2022-11-10T23:59:59.999Z"]]
    expect(iso(queryDates("What dish did Nate make on 9 November, 2022?", november))).toEqual(week)
    expect(iso(queryDates("What dish did Nate make on November 9th, 2022?", november))).toEqual(week)
    expect(iso(queryDates("Where was the picture shared on December 1,2023 taken?", november))).toEqual([["2023-11-24T00:00:00.000Z", "2023-12-02T23:59:59.999Z"]])
    // A month with only its year is still the whole month.
    expect(iso(queryDates("What did Nate make in November 2022?", november))).toEqual([["2022-11-01T00:00:00.000Z", "2022-11-30T23:59:59.999Z"]])
  })
})
