/** The offline planner on its own: which facts share a note, what a change of attribute does, what summaries follow. */
import { describe, expect, it } from "vitest"
import { MemoryId, OrgId, SpaceId } from "../../src/domain/Ids.ts"
import type { Memory } from "../../src/domain/Memory.ts"
import { offlineText } from "../../src/consolidation/Consolidator.ts"
import { planGroups, planGroupsInSlices, planSummaries, SLICE_MS } from "../../src/consolidation/Planner.ts"
import { summaryText } from "../../src/consolidation/Synthesis.ts"

let counter = 0
const fact = (text: string, date: string, extra: Partial<Memory> = {}): Memory => {
  const id = MemoryId.make(`mem_${++counter}`)
  const time = new Date(date)
  return {
    id,
    orgId: OrgId.make("org_1"),
    spaceId: SpaceId.make("s"),
    documentId: `doc_${counter}`,
    text,
    sourceText: text,
    context: "",
    type: "fact",
    state: "active",
    entities: [],
    metadata: {},
    tags: [],
    userId: null,
    agentId: null,
    sessionId: null,
    memberId: null,
    eventTime: time,
    occurredStart: null,
    occurredEnd: null,
    sourceIds: [],
    position: counter,
    consolidatedAt: null,
    supersededBy: null,
    createdAt: time,
    updatedAt: time,
    ...extra
  }
}

let ids = 0
const newId = () => MemoryId.make(`note_${++ids}`)

describe("consolidation planner", () => {
  it("pairs facts of one subject about one topic, and leaves an unrelated fact alone", () => {
    const a = fact("Nina: I started marathon training with long Sunday runs.", "2024-07-01")
    const b = fact("Nina: Marathon training reached thirty kilometres.", "2024-07-08")
    const c = fact("Nina: I planted balcony tomatoes in big clay pots.", "2024-07-09")
    const plan = planGroups([a, b, c], [a.id, b.id, c.id], newId)
    expect(plan.groups).toHaveLength(1)
    expect(plan.groups[0]!.facts.map((f) => f.memory.id)).toEqual([a.id, b.id])
    expect(plan.considered).toEqual([a.id, b.id, c.id])
    expect(offlineText(plan.groups[0]!)).toBe(
      "Nina: (1 July 2024) I started marathon training with long Sunday runs. (8 July 2024) Marathon training reached thirty kilometres."
    )
  })

  it("a user id that is a plain lower-case word names the note's subject as the facts do ('zara' is Zara)", () => {
    const a = fact("Zara signed up for a pottery class at the community studio.", "2024-02-02", { userId: "zara" })
    const b = fact("Zara made Zara's first bowl in pottery class.", "2024-03-05", { userId: "zara" })
    const plan = planGroups([a, b], [a.id, b.id], newId)
    expect(plan.groups).toHaveLength(1)
    expect(offlineText(plan.groups[0]!)).toBe(
      "Zara: (2 February 2024) Zara signed up for a pottery class at the community studio. (5 March 2024) Zara made Zara's first bowl in pottery class."
    )
  })

  it("cites each fact's date as precisely as the fact knows it, never a day it did not say", () => {
    const march = fact("Nina: Nina started marathon training in March 2024.", "2024-04-02", {
      occurredStart: new Date("2024-03-01T00:00:00Z"),
      occurredEnd: new Date("2024-03-31T23:59:59.999Z")
    })
    const year = fact("Nina: Nina ran a first marathon training plan in 2023.", "2024-04-03", {
      occurredStart: new Date("2023-01-01T00:00:00Z"),
      occurredEnd: new Date("2023-12-31T23:59:59.999Z")
    })
    const day = fact("Nina: Marathon training reached thirty kilometres.", "2024-07-08")
    const plan = planGroups([march, year, day], [march.id, year.id, day.id], newId)
    expect(plan.groups).toHaveLength(1)
    const text = offlineText(plan.groups[0]!)
    expect(text).toContain("(2023) ")
    expect(text).toContain("(March 2024) ")
    expect(text).toContain("(8 July 2024) ")
    expect(text).not.toMatch(/1 (January|March)/)
  })

  it("never groups facts of different subjects or scopes, nor pleasantries", () => {
    const a = fact("Nina: I started marathon training.", "2024-07-01")
    const b = fact("Omar: I started marathon training.", "2024-07-02")
    const c = fact("Nina: Marathon training is going well.", "2024-07-03", { userId: "someone-else" })
    const d = fact("Nina: Thanks, Omar! Wow, so great!", "2024-07-04")
    const e = fact("Nina: Thanks, Omar! Wow, that's great!", "2024-07-05")
    expect(planGroups([a, b, c, d, e], [a.id, b.id, c.id, d.id, e.id], newId).groups).toEqual([])
  })
})

void planSummaries

describe("the plan in slices", () => {
  const topics = ["marathon training", "balcony tomatoes", "the pottery class", "a sailing trip", "jazz records", "the night market"]
  const many = Array.from({ length: 300 }, (_, i) =>
    fact(`${["Nina", "Omar", "Lena"][i % 3]}: I talked about ${topics[i % topics.length]} again on day ${i} with friends.`, "2024-07-01", {
      position: i
    }))
  const pending = many.slice(100).map((m) => m.id)
  const plan = (steps: Generator<void, ReturnType<typeof planGroups>>) => {
    let pauses = 0
    for (;;) {
      const next = steps.next()
      if (next.done) return { plan: next.value, pauses }
      pauses++
    }
  }
  const shown = (p: ReturnType<typeof planGroups>) => JSON.stringify(p.groups.map((g) => [g.id, g.facts.map((f) => f.memory.id)]))

  it("pauses once a slice has run SLICE_MS, however few memories it has done, and plans the same as in one go", () => {
    let idsA = 0
    let idsB = 0
    const whole = planGroups(many, pending, () => MemoryId.make(`n_${++idsA}`))
    // A clock that moves a whole slice on each reading: every check finds the slice over.
    let now = 0
    const sliced = plan(planGroupsInSlices(many, pending, () => MemoryId.make(`n_${++idsB}`), () => (now += SLICE_MS)))
    expect(shown(sliced.plan)).toBe(shown(whole))
    expect(whole.groups.length).toBeGreaterThan(10)
    // At least one pause after each pending fact, whose comparisons are the costly part.
    expect(sliced.pauses).toBeGreaterThanOrEqual(pending.length)
  })

  it("while its caller keeps it waiting longer than a slice, takes one step between pauses; otherwise whole slices", () => {
    // Each reading of the clock is half a millisecond of planning; each pause, `wait` ms of waiting.
    const pausesWith = (wait: number) => {
      let ids = 0
      let now = 0
      const steps = planGroupsInSlices(many, pending, () => MemoryId.make(`n_${++ids}`), () => (now += 0.5))
      let pauses = 0
      for (let next = steps.next(); !next.done; next = steps.next()) {
        pauses++
        now += wait
      }
      return pauses
    }
    // After the first pause every pending fact is followed by one.
    expect(pausesWith(100)).toBeGreaterThanOrEqual(pending.length)
    expect(pausesWith(0)).toBeGreaterThan(0)
    expect(pausesWith(0)).toBeLessThan(pending.length / 4)
  })

  it("does not pause while a slice is within its time", () => {
    let ids = 0
    const still = plan(planGroupsInSlices(many, pending, () => MemoryId.make(`n_${++ids}`), () => 0))
    expect(still.pauses).toBe(0)
    expect(still.plan.groups.length).toBeGreaterThan(10)
  })
})

describe("summaries", () => {
  const note = (text: string, start: string, end: string, subject = "Gina") =>
    fact(`${subject}: ${text}`, end, { type: "note", occurredStart: new Date(start), occurredEnd: new Date(end) })

  it("name each of a few notes by its first words", () => {
    const notes = [note("(3 May 2024) Gina opened a clothing store.", "2024-05-03T00:00:00Z", "2024-05-03T12:00:00Z"),
      note("(9 May 2024) Gina joined a dance studio.", "2024-05-09T00:00:00Z", "2024-05-09T12:00:00Z")]
    expect(summaryText("Gina", notes)).toBe("Gina, across 2 notes: Gina: (3 May 2024) Gina opened a clothing store; Gina: (9 May 2024) Gina joined a dance studio.")
  })

  it("say what many notes are mostly about, and when, in a few words taken from them", () => {
    const topics = [
      "the clothing store had online orders", "the clothing store got a new logo", "the dance studio hired a teacher",
      "the online store made a first sale", "the dance studio opened on Sundays", "Jon came to the dance studio",
      "the clothing store ran a summer sale", "Gina's store made a lookbook", "the dance studio held a recital", "Jon wants a studio tour"
    ]
    const notes = topics.map((t, i) =>
      note(`(${i + 1} June 2023) Gina says ${t}, and it made things going well.`, `2023-06-${String(i + 1).padStart(2, "0")}T00:00:00Z`,
        `2023-06-${String(i + 1).padStart(2, "0")}T12:00:00Z`))
    notes.push(note("(2022) Gina moved to the city in 2022.", "2022-01-01T00:00:00Z", "2022-12-31T23:59:59.999Z"))
    const text = summaryText("Gina", notes, new Set(["jon"]))
    expect(text.startsWith("Gina, across 11 notes (2022 – 10 June 2023), most about ")).toBe(true)
    // The words that come back, with in how many notes; not the subject, not who the notes are by, not generic words.
    expect(text).toContain("store (5)")
    expect(text).toContain("studio (5)")
    expect(text).toContain("dance (4)")
    for (const absent of ["Gina (", "Jon", "made", "going", "says", "things"]) expect(text).not.toContain(absent)
    expect(text.length).toBeLessThan(200)
  })
})
