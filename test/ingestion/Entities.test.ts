import { describe, expect, it } from "vitest"
import { entityKey, extractEntities, opaqueIds } from "../../src/ingestion/Entities.ts"
import { extractLocal } from "../../src/ingestion/Extractor.ts"
import { canonicalEntities, entityId } from "../../services/store/EntityRows.ts"

const names = (text: string, exclude: ReadonlyArray<string> = []) => extractEntities(text, null, exclude).map((e) => e.name)

describe("entities", () => {
  it("one key per name, whatever its case, possessive, accents or leading article", () => {
    expect(entityKey("Caroline")).toBe("caroline")
    expect(entityKey("Caroline's")).toBe("caroline")
    expect(entityKey("CAROLINE’s")).toBe("caroline")
    expect(entityKey("José")).toBe("jose")
    expect(entityKey("The Beatles")).toBe("beatles")
    expect(entityKey("New   York")).toBe("new york")
    expect(entityId(entityKey("Caroline's"))).toBe(entityId(entityKey("caroline")))
    expect(entityId("caroline")).toMatch(/^ent_[0-9a-f]{20}$/)
    const merged = canonicalEntities([
      { name: "Caroline", kind: "person" },
      { name: "caroline", kind: "thing" },
      { name: "Lisbon", kind: "place" }
    ])
    expect(merged.map((e) => e.name)).toEqual(["Caroline", "Lisbon"])
  })

  it("calendar words and capitalised common words that open a sentence are not entities", () => {
    expect(names("From now on I will run every Monday in May.")).toEqual([])
    expect(names("Honestly, I think Sweden is nice.")).toEqual(["Sweden"])
    expect(names("Thanks! That sounds great, Jon.")).toEqual(["Jon"])
    expect(names("Awesome, Jon!")).toEqual(["Jon"])
    // After a speaker's name the opener is no longer first in the text; it is still a common word.
    expect(extractEntities("Caroline: Thanks, Mel. It was fun! Our trip was cool. OK, BTW we saw Oliver.", "Caroline").map((e) => e.name))
      .toEqual(["Caroline", "Mel", "Oliver"])
    // A common noun that only ever opens a sentence is no name; a name that opens one still is.
    expect(extractEntities("Maria: Way to go, John! Things are good.", "Maria").map((e) => e.name)).toEqual(["Maria", "John"])
    expect(names("Grace came over. Paris was lovely.")).toEqual(expect.arrayContaining(["Grace", "Paris"]))
    expect(names("In January Nate bought a Tesla.")).toEqual(expect.arrayContaining(["Nate", "Tesla"]))
    expect(names("In January Nate bought a Tesla.")).not.toContain("January")
    // Acronyms and multi-word names stay.
    expect(names("Caroline joined the LGBTQ group at Acme Corp.")).toEqual(expect.arrayContaining(["Caroline", "LGBTQ"]))
  })

  it("a name is trimmed of the common words read into it at either end, never of what belongs to it", () => {
    expect(names("Priya's sister Anjali is coming with us, she's a photographer.")).toContain("Anjali")
    expect(names("Priya's sister Anjali is coming with us, she's a photographer.")).not.toContain("sister Anjali")
    expect(names("My friend Tom Baker and aunt Sue came.")).toEqual(expect.arrayContaining(["Tom Baker", "Sue"]))
    expect(names("My friend Tom Baker and aunt Sue came.")).not.toContain("aunt Sue")
    expect(names("We went to the Bank of America tower.")).not.toContain("America tower")
    // A name found only inside a longer one is its word, not a name of its own; said alone too, it stays.
    expect(names("Yes, the Riverside Runners. We meet every Tuesday.")).toEqual(["Riverside Runners"])
    expect(names("Tom Baker came over. Later Tom said hi.")).toEqual(expect.arrayContaining(["Tom Baker", "Tom"]))
    // Particles inside a name stay, and so does a word with a capital inside.
    expect(names("I met Vincent van Gogh's cousin.")).toEqual(["Vincent van Gogh"])
  })

  it("an assistant's label is never an entity; a person speaking is", () => {
    const [said] = extractLocal({ content: "Assistant: The ferry to Oslo leaves at nine.", eventTime: new Date() })
    expect(said!.entities.map((e) => e.name)).toEqual(["Oslo"])
    const [person] = extractLocal({ content: "Gina: The ferry to Oslo leaves at nine.", eventTime: new Date() })
    expect(person!.entities.map((e) => e.name)).toEqual(expect.arrayContaining(["Gina", "Oslo"]))
  })

  it("scope ids that are identifiers or roles are never entities; one that is a name is, where the text names it", () => {
    expect(names("Yesterday Priya met user_42 in Oslo.", opaqueIds(["user_42"]))).toEqual(["Oslo", "Priya"])
    const [memory] = extractLocal({ content: "I moved to Oslo with Tom.", eventTime: new Date(), speaker: "u-7731", scopeIds: ["u-7731"] })
    expect(memory!.entities.map((e) => e.name)).toEqual(expect.arrayContaining(["Oslo", "Tom"]))
    expect(memory!.entities.map((e) => e.name)).not.toContain("u-7731")
    // A user whose id is her name: her facts are rewritten to name her, and she is their entity (the graph shows her).
    for (const id of ["marta", "Marta"]) {
      const [fact] = extractLocal({ content: "I'm allergic to peanuts.", eventTime: new Date(), speaker: id, scopeIds: [id] })
      expect(fact!.text).toBe("Marta is allergic to peanuts.")
      expect(fact!.entities.map((e) => e.name)).toEqual(["Marta"])
    }
    const [told] = extractLocal({ content: "Marta is allergic to shellfish.", eventTime: new Date(), scopeIds: ["marta"] })
    expect(told!.entities.map((e) => e.name)).toEqual(["Marta"])
    expect(opaqueIds(["user", "Assistant", "session-9", "ana.lima@example.com", "Ana Lima", "José"])).toEqual(["user", "Assistant", "session-9", "ana.lima@example.com"])
    // A name written before the turn is the speaker, and an entity.
    const [turn] = extractLocal({ content: "Gina: I opened a store in Lisbon.", eventTime: new Date(), scopeIds: ["u-1"] })
    expect(turn!.entities.map((e) => e.name)).toEqual(expect.arrayContaining(["Gina", "Lisbon"]))
  })
})
