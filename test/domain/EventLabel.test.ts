/** Event times as syntheses cite them: as precise as the memory is, in words and in ISO 8601. */
import { describe, expect, it } from "vitest"
import { eventIso, eventLabel, spanLabel } from "../../src/domain/EventLabel.ts"
import { resolveRelativeDates } from "../../src/ingestion/RelativeDates.ts"

const at = new Date("2023-05-08T13:56:00Z")
const cited = (text: string) => {
  const { start, end } = resolveRelativeDates(text, at)
  return [eventLabel(start ?? at, end), eventIso(start ?? at, end)]
}

describe("event labels", () => {
  it("a day, a month, a year and a range read as what they are", () => {
    expect(cited("I went there yesterday.")).toEqual(["7 May 2023", "2023-05-07"])
    expect(cited("It happened last month.")).toEqual(["April 2023", "2023-04"])
    expect(cited("She moved last year.")).toEqual(["2022", "2022"])
    expect(cited("We met last week.")).toEqual(["28 April – 7 May 2023", "2023-04-28/2023-05-07"])
    expect(cited("No date in this one.")).toEqual(["8 May 2023", "2023-05-08"])
  })

  it("ranges within a month, across months and across years", () => {
    const d = (iso: string) => new Date(iso)
    expect(eventLabel(d("2024-06-10T00:00:00Z"), d("2024-06-16T23:59:59.999Z"))).toBe("10–16 June 2024")
    expect(eventLabel(d("2024-06-28T00:00:00Z"), d("2024-07-03T12:00:00Z"))).toBe("28 June – 3 July 2024")
    expect(eventLabel(d("2023-12-30T00:00:00Z"), d("2024-01-02T00:00:00Z"))).toBe("30 December 2023 – 1 January 2024")
    expect(eventIso(d("2023-12-30T00:00:00Z"), d("2024-01-02T00:00:00Z"))).toBe("2023-12-30/2024-01-01")
    // An instant, or an end before the start, is a day.
    expect(eventLabel(d("2024-06-10T08:30:00Z"), null)).toBe("10 June 2024")
    expect(eventLabel(d("2024-06-10T08:30:00Z"), d("2024-06-01T00:00:00Z"))).toBe("10 June 2024")
  })

  it("a span of several memories: each end as precise as its memory", () => {
    const d = (iso: string) => new Date(iso)
    expect(spanLabel(d("2020-01-01T00:00:00Z"), d("2023-10-20T15:00:00Z"))).toBe("2020 – 20 October 2023")
    expect(spanLabel(d("2023-05-01T00:00:00Z"), d("2023-10-31T23:59:59.999Z"))).toBe("May – October 2023")
    expect(spanLabel(d("2023-01-20T10:00:00Z"), d("2023-07-23T10:00:00Z"))).toBe("20 January – 23 July 2023")
    expect(spanLabel(d("2022-01-01T00:00:00Z"), d("2022-12-31T23:59:59.999Z"))).toBe("2022")
  })
})
