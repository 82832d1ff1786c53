import compromiseAsShipped from "compromise"
import { describe, expect, it } from "vitest"
import { nlp } from "../../src/ingestion/NameSentences.ts"
import { fastBulkMatch } from "../../src/ingestion/PostTaggerSweep.ts"

/** Every term's text and tags, sentence by sentence. */
const tagsOf = (doc: ReturnType<typeof compromiseAsShipped>) =>
  doc.docs.map((terms) => terms.map((term) => `${term.text}/${[...(term.tags ?? [])].join(",")}`).join(" "))

const TEXTS = [
  "Caroline went to the LGBTQ support group yesterday, and it was so powerful.",
  "Sure, here is what I found. Ava visited the old bridge in Lisbon. The budget came to roughly four hundred dollars.",
  "we met mark at the cafe and talked for hours, then drove to mount hood for the weekend.",
  "The delivery van driver was late again, so Jon called the FBI. I'm not sure he'll be back before 12 main street closes.",
  "Mr. Smith and Dr. Jones, of the Royal Society, spent three years studying the effects of climate change on Arctic foxes.",
  "If you want, I can put together a checklist for next time. Keep in mind that the opening hours change on public holidays!",
  "She'd been reading 'The Old Man and the Sea' while her brother, who plays for Manchester United, was training in Spain.",
  "Don't walk, run! There's nothing left to lose; we'll be fine as long as the first teacher doesn't notice."
]

describe("the post-tagger's faster sweep", () => {
  it("tags every word as compromise's own sweep does", () => {
    // The ES module build is a second compromise, with its own sweep; the extractor's has the faster one.
    for (const text of [...TEXTS, TEXTS.join(" "), TEXTS.join("\n\n").toLowerCase()]) {
      expect(tagsOf(nlp()(text))).toEqual(tagsOf(compromiseAsShipped(text)))
    }
  })

  it("is the sweep the extractor's compromise runs", () => {
    const sweepOf = (methods: object) => Object.getOwnPropertyDescriptor(Object.getOwnPropertyDescriptor(methods, "one")?.value, "bulkMatch")?.value
    expect(sweepOf(nlp().methods())).not.toBe(sweepOf(compromiseAsShipped.methods()))
  })

  it("hands a net it cannot read to compromise's own sweep", () => {
    const calls: Array<unknown> = []
    const sweep = fastBulkMatch((_document, net) => {
      calls.push(net)
      return ["compromise's answer"]
    })
    const strange = { hooks: { "#Noun": [{ match: "#Noun", needs: "#Noun" }] }, always: [] }
    expect(sweep([[]], strange, nlp().methods())).toEqual(["compromise's answer"])
    expect(sweep([[]], null, nlp().methods())).toEqual(["compromise's answer"])
    expect(calls).toEqual([strange, null])
  })
})
