import { describe, expect, it } from "vitest"
import { extractLocal } from "../../src/ingestion/Extractor.ts"
import { resolveRelativeDates } from "../../src/ingestion/RelativeDates.ts"
import { splitSpeaker } from "../../src/ingestion/Speaker.ts"

const at = new Date("2023-05-08T13:56:00Z") // a Monday

describe("local extraction", () => {
  it("finds the speaker prefix, but not in times, URLs or labels", () => {
    expect(splitSpeaker("Caroline: I went out.")).toEqual({ speaker: "Caroline", body: "I went out." })
    expect(splitSpeaker("Mary-Kate O'Neil: hello there").speaker).toBe("Mary-Kate O'Neil")
    expect(splitSpeaker("Meeting at 10:30 tomorrow").speaker).toBeNull()
    expect(splitSpeaker("https://example.com is down").speaker).toBeNull()
    expect(splitSpeaker("Note: buy milk").speaker).toBeNull()
  })

  it("resolves first person to the speaker and relative dates against the event time", () => {
    const [memory] = extractLocal({ content: "Caroline: I went to a LGBTQ support group yesterday and my mom came too.", eventTime: at })
    expect(memory!.text).toBe("Caroline went to a LGBTQ support group on 7 May 2023 and Caroline's mom came too.")
    expect(memory!.sourceText).toBe("Caroline: I went to a LGBTQ support group yesterday and my mom came too.")
    expect(memory!.speaker).toBe("Caroline")
    expect(memory!.occurredStart?.toISOString()).toBe("2023-05-07T00:00:00.000Z")
    expect(memory!.occurredEnd?.toISOString()).toBe("2023-05-07T23:59:59.999Z")
    expect(memory!.type).toBe("fact")
  })

  it("gives the verb after the rewritten first person its third-person form, the auxiliary of a question too, not with several subjects", () => {
    const said = (content: string) => extractLocal({ content: `Caroline: ${content}`, eventTime: at })[0]!.text
    expect(said("I really want to help, and I teach kids.")).toBe("Caroline really wants to help, and Caroline teaches kids.")
    expect(said("I don't know yet and I haven't tried.")).toBe("Caroline doesn't know yet and Caroline hasn't tried.")
    expect(said("I go out, I study and I watch films.")).toBe("Caroline goes out, Caroline studies and Caroline watches films.")
    expect(said("I went hiking and I thought it was great. I can swim.")).toBe("Caroline went hiking and Caroline thought it was great. Caroline can swim.")
    expect(said("Mel and I love camping. My kids and I paint.")).toBe("Mel and Caroline love camping. Caroline's kids and Caroline paint.")
    // In a question the auxiliary agrees with the speaker, and the verb after it keeps its form.
    expect(said("Where do I sign up for pottery?")).toBe("Where does Caroline sign up for pottery?")
    expect(said("What do I do for work? Am I late? Have I told you about Rex?"))
      .toBe("What does Caroline do for work? Is Caroline late? Has Caroline told you about Rex?")
    expect(said("Why don't I ever sleep? Don't I have a class today?")).toBe("Why doesn't Caroline ever sleep? Doesn't Caroline have a class on 8 May 2023?")
    expect(said("So do I. I do love pasta.")).toBe("So does Caroline. Caroline does love pasta.")
    expect(said("I really am proud of the painting.")).toBe("Caroline really is proud of the painting.")
    // Any "-ly" word between is an adverb, unless it is a verb of its own.
    expect(said("I nearly cried, and I rely on friends.")).toBe("Caroline nearly cried, and Caroline relies on friends.")
    expect(said("I need a break. I first met Mel there, I retook the class and I learnt a lot."))
      .toBe("Caroline needs a break. Caroline first met Mel there, Caroline retook the class and Caroline learnt a lot.")
  })

  it("uses the caller's speaker when the content has no prefix, and keeps the prefix when nothing names the speaker", () => {
    // An id that is one plain lower-case word is the name it reads as; any other id is written as it is.
    expect(extractLocal({ content: "I love hiking.", eventTime: at, speaker: "ana" })[0]!.text).toBe("Ana loves hiking.")
    expect(extractLocal({ content: "I love hiking.", eventTime: at, speaker: "u-42" })[0]!.text).toBe("u-42 loves hiking.")
    expect(extractLocal({ content: "I love hiking.", eventTime: at, speaker: "Ana Lima" })[0]!.text).toBe("Ana Lima loves hiking.")
    // A speaker introducing themselves keeps the introduction as said.
    expect(extractLocal({ content: "Hi! I'm Marco, I work as a nurse in Turin.", eventTime: at, speaker: "marco" })[0]!.text)
      .toBe("Hi! I'm Marco, Marco works as a nurse in Turin.")
    expect(extractLocal({ content: "Melanie: That pottery class sounds relaxing.", eventTime: at })[0]!.text)
      .toBe("Melanie: That pottery class sounds relaxing.")
  })

  it("resolves the common relative forms, preferring the past", () => {
    const resolve = (s: string) => resolveRelativeDates(s, at)
    expect(resolve("We met last week.").text).toBe("We met in the week before 8 May 2023.")
    expect(resolve("It happened last month.").text).toBe("It happened in April 2023.")
    expect(resolve("She moved last year.").text).toBe("She moved in 2022.")
    expect(resolve("We went there two days ago.").text).toBe("We went there on 6 May 2023.")
    expect(resolve("I ran last Friday.").text).toBe("I ran on 5 May 2023.")
    expect(resolve("I ran last Monday.").text).toBe("I ran on 1 May 2023.")
    expect(resolve("The trip was last May.").text).toBe("The trip was in May 2022.")
    expect(resolve("The trip was in March.").text).toBe("The trip was in March 2023.")
    expect(resolve("The trip was in June.").text).toBe("The trip was in June 2022.")
    expect(resolve("The show is next month.").text).toBe("The show is in June 2023.")
    // A month named of what is still to come is the next one.
    expect(resolve("I'm training for the marathon in September.").text).toBe("I'm training for the marathon in September 2023.")
    expect(resolve("We will visit Rome in April.").text).toBe("We will visit Rome in April 2024.")
    expect(resolve("I'll see her in May.").text).toBe("I'll see her in May 2023.")
    // "Last weekend" is the last whole Saturday and Sunday before the day (8 May 2023 is a Monday); on a weekend, the one before.
    const weekend = resolve("We hiked last weekend.")
    expect(weekend.text).toBe("We hiked on the weekend before 8 May 2023.")
    expect([weekend.start?.toISOString(), weekend.end?.toISOString()]).toEqual(["2023-05-06T00:00:00.000Z", "2023-05-07T23:59:59.999Z"])
    const onSunday = resolveRelativeDates("We hiked last weekend.", new Date("2023-05-07T18:00:00Z"))
    expect([onSunday.start?.toISOString(), onSunday.end?.toISOString()]).toEqual(["2023-04-29T00:00:00.000Z", "2023-04-30T23:59:59.999Z"])
    const none = resolve("Nothing dated here, just a walk by the river.")
    expect(none.text).toBe("Nothing dated here, just a walk by the river.")
    expect(none.start).toBeNull()
  })

  it("reads dates written out in full as the time a sentence tells of, without rewriting them", () => {
    const span = (s: string) => {
      const r = resolveRelativeDates(s, at)
      expect(r.text).toBe(s)
      return [r.start?.toISOString() ?? null, r.end?.toISOString() ?? null]
    }
    expect(span("I'm travelling to Lisbon in March 2024.")).toEqual(["2024-03-01T00:00:00.000Z", "2024-03-31T23:59:59.999Z"])
    expect(span("Nothing relative here, born 4 March 1990.")).toEqual(["1990-03-04T00:00:00.000Z", "1990-03-04T23:59:59.999Z"])
    expect(span("We married on March 3rd, 2021.")).toEqual(["2021-03-03T00:00:00.000Z", "2021-03-03T23:59:59.999Z"])
    expect(span("The lease started 2024-05-03.")).toEqual(["2024-05-03T00:00:00.000Z", "2024-05-03T23:59:59.999Z"])
    expect(span("Sept 2025 was busy.")).toEqual(["2025-09-01T00:00:00.000Z", "2025-09-30T23:59:59.999Z"])
    expect(span("In 2022 I lived in Oslo.")).toEqual(["2022-01-01T00:00:00.000Z", "2022-12-31T23:59:59.999Z"])
    // No such day: the month it names.
    expect(span("On 31 February 2023 it snowed.")).toEqual(["2023-02-01T00:00:00.000Z", "2023-02-28T23:59:59.999Z"])
    // A number that is not a year after "in" names no time.
    expect(span("I paid 2024 dollars for it.")).toEqual([null, null])
    // A relative date the sentence also names comes first: it is what the rewriting made absolute.
    const both = resolveRelativeDates("Yesterday I booked the flight for 3 June 2024.", at)
    expect(both.start?.toISOString()).toBe("2023-05-07T00:00:00.000Z")
    // Through extraction, as a write stores it.
    const [fact] = extractLocal({ content: "Marta moves to Porto in March 2024.", eventTime: new Date("2026-11-28T12:00:00Z") })
    expect([fact!.occurredStart?.toISOString(), fact!.occurredEnd?.toISOString()]).toEqual(["2024-03-01T00:00:00.000Z", "2024-03-31T23:59:59.999Z"])
  })

  it("reads a month named in the present progressive of a plan as the next one, in a fact and in a question alike", () => {
    const november = new Date("2026-11-28T12:00:00Z")
    const told = resolveRelativeDates("I'm travelling to Japan in September.", november)
    expect(told.text).toBe("I'm travelling to Japan in September 2027.")
    const asked = resolveRelativeDates("Where am I travelling in September?", november)
    expect(asked.text).toBe("Where am I travelling in September 2027?")
    expect(asked.start).toEqual(told.start)
    // Past tense keeps the past; an adjective in -ing is no plan.
    expect(resolveRelativeDates("Where was I travelling in September?", november).text).toBe("Where was I travelling in September 2026?")
    expect(resolveRelativeDates("The food in September is amazing.", november).text).toBe("The food in September 2026 is amazing.")
  })

  it("drops content with no information but keeps short facts", () => {
    for (const filler of ["ok", "Thanks!", "lol", "haha yes", "Hi!", "Good morning", "👍", "   ", "Caroline: Thanks so much!"]) {
      expect(extractLocal({ content: filler, eventTime: at }), filler).toEqual([])
    }
    expect(extractLocal({ content: "Thanks for the book about Rome", eventTime: at })).toHaveLength(1)
  })

  it("extracts typed entities, the speaker among them", () => {
    const [memory] = extractLocal({ content: "Jon: I flew to Paris with Gina to visit Google.", eventTime: at })
    const byName = Object.fromEntries(memory!.entities.map((e) => [e.name, e.kind]))
    expect(byName["Jon"]).toBe("person")
    expect(byName["Gina"]).toBe("person")
    expect(byName["Paris"]).toBe("place")
    expect(Object.keys(byName)).toContain("Google")
  })

  it("keeps a chat turn whole and cuts long content into facts without losing a sentence", () => {
    expect(extractLocal({ content: "Nate: I adopted a turtle. It is tiny. Her name is Shelly.", eventTime: at })).toHaveLength(1)
    const sentences = Array.from({ length: 12 }, (_, i) => `Fact number ${i} is about the harbour of Genoa and its ${i + 2} cranes.`)
    const memories = extractLocal({ content: sentences.join(" "), eventTime: at })
    expect(memories.length).toBeGreaterThan(1)
    const joined = memories.map((m) => m.text).join(" ")
    for (const sentence of sentences) expect(joined).toContain(sentence)
  })

  it("gives each fact of long content the speaker and the entities its own words name", () => {
    const first = "Yesterday I walked through Lisbon with Marta and we talked about tiles for a long time. " +
      "The old quarter was full of music and the light on the river was lovely all afternoon. " +
      "We stopped for custard tarts at a bakery near the cathedral and watched the trams go by."
    const second = "Later I flew to Oslo to meet Henrik about the harbour project and its budget. " +
      "The meeting ran long but we agreed on a plan for the spring and a visit in May. " +
      "Afterwards I walked along the fjord until the evening ferry left for the islands."
    const memories = extractLocal({ content: `Priya: ${first} ${second}`, eventTime: at })
    expect(memories.length).toBeGreaterThan(1)
    const naming = (name: string) => memories.filter((m) => m.text.includes(name))
    for (const memory of memories) {
      const found = memory.entities.map((e) => e.name)
      expect(found).toContain("Priya")
      for (const name of ["Lisbon", "Marta", "Oslo", "Henrik"]) {
        expect(found.includes(name), `${name} in: ${memory.text}`).toBe(memory.text.includes(name))
      }
    }
    expect(naming("Marta")).not.toEqual(naming("Henrik"))
  })

  it("marks the agent's own first-person writes as experience", () => {
    expect(extractLocal({ content: "I retried the deploy and it passed.", eventTime: at, fromAgent: true })[0]!.type).toBe("experience")
    expect(extractLocal({ content: "The deploy passed.", eventTime: at, fromAgent: true })[0]!.type).toBe("fact")
  })
})
