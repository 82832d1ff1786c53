/**
 * Texts kept as UTF-8 bytes read back as they were written, through growth,
 * release and compaction; a space's columns give back each memory's text and
 * source whichever way the source was kept (same, whole, as edits), also
 * after slots are renumbered.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryId, OrgId, SpaceId } from "../../src/domain/Ids.ts"
import { MemoryColumns, type MemoryMeta } from "../../src/space/MemoryColumns.ts"
import { TextArena } from "../../src/space/TextArena.ts"
import { sourceDiff } from "../../services/store/SourceDiff.ts"

const SAMPLES = [
  "Caroline: I went to the LGBTQ support group yesterday.",
  "Zoë moved to Kraków — in März 2024 ☕️, then 東京.",
  "",
  "emoji 🐕‍🦺 and a pair 𝄞 of surrogates",
  "x".repeat(5000)
]

describe("TextArena", () => {
  it("reads back what it kept, through growth, release and compaction", () => {
    const arena = new TextArena()
    const kept = new Map<number, string>()
    // Enough bytes to grow the buffer many times and compact it several times.
    for (let round = 0; round < 400; round++) {
      for (const [i, sample] of SAMPLES.entries()) {
        const text = `${round}:${i}:${sample}`
        kept.set(arena.add(text), text)
      }
      // Let go of most of what was kept, oldest first.
      for (const handle of [...kept.keys()].slice(0, 4)) {
        arena.release(handle)
        kept.delete(handle)
      }
    }
    for (const [handle, text] of kept) expect(arena.get(handle)).toBe(text)
    const bytes = [...kept.values()].reduce((sum, text) => sum + Buffer.byteLength(text), 0)
    expect(arena.keptBytes).toBe(bytes)
    // Released room was taken back: the buffer is not every byte ever written (about 2 MB here).
    expect(arena.capacityBytes).toBeLessThan(4 * Math.max(bytes, 1 << 16))
  })
})

const orgId = OrgId.make("org_arena")
const spaceId = SpaceId.make("arena")
const meta = (i: number): MemoryMeta => ({
  id: MemoryId.make(`mem_${i}`),
  orgId,
  spaceId,
  documentId: `doc_${i}`,
  type: "fact",
  state: "active",
  entities: [],
  tags: [],
  userId: null,
  agentId: null,
  sessionId: null,
  memberId: null,
  eventTime: new Date(1_700_000_000_000 + i),
  occurredStart: null,
  occurredEnd: null,
  sourceIds: [],
  position: i,
  consolidatedAt: null,
  supersededBy: null,
  createdAt: new Date(1_700_000_000_000 + i),
  updatedAt: new Date(1_700_000_000_000 + i)
})

describe("MemoryColumns texts", () => {
  it("give back text and source however the source was kept, also after renumbering", () => {
    const columns = new MemoryColumns(orgId, spaceId)
    const text = "Caroline went to the support group on 7 May 2023."
    const source = "I went to the support group yesterday."
    const diffed = "Zoë said Zoë moved to Kraków."
    const diffedSource = "Zoë said I moved to Kraków."
    const diff = sourceDiff(diffed, diffedSource)
    expect(diff).not.toBeNull()
    const texts = (t: string, s: string) => ({ text: t, sourceText: s, context: "", metadata: {} })
    columns.set(0, meta(0), texts(text, text), null)
    columns.set(1, meta(1), texts(text, source), null)
    columns.set(2, meta(2), undefined, null)
    columns.set(3, meta(3), { ...texts("gone", "gone"), context: "c", metadata: { k: 1 } }, null)
    expect(columns.complete).toBe(false)
    // Read from the store as the store keeps it: the source as its edits from the text.
    columns.fillText(2, texts(diffed, ""), diff)
    expect(columns.complete).toBe(true)
    columns.clear(3)
    columns.renumber(Int32Array.from([0, 1, 2, -1]), 3)
    const back = [0, 1, 2].map((slot) => columns.record(slot, null)!)
    expect(back.map((m) => [m.id, m.text, m.sourceText])).toEqual([
      ["mem_0", text, text],
      ["mem_1", text, source],
      ["mem_2", diffed, diffedSource]
    ])
    // Replacing a memory's texts keeps only the new ones.
    columns.set(1, meta(1), texts("edited", "edited"), null)
    expect(columns.record(1, null)!.sourceText).toBe("edited")
  })
})
