/** The offline planner on its own: which facts share a note, what a change of attribute does, what summaries follow. */
import { describe, expect, it } from "vitest"
import { MemoryId, OrgId, SpaceId } from "../../src/domain/Ids.ts"
import type { Memory } from "../../src/domain/Memory.ts"
import { offlineText } from "../../src/consolidation/Consolidator.ts"
import { planGroups, planSummaries } from "../../src/consolidation/Planner.ts"

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
