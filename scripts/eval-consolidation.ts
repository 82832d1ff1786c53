/**
 * Tuning aid beside `bench:locomo -- --consolidate`: evidence recall within a
 * 1,000-token block, raw facts against the consolidated view, with the
 * retrieval engine and the offline planner alone (no service around them),
 * for three ways of grouping the same facts:
 * - `planner`: the offline engine's notes (as the service writes them, in
 *   runs of RUN_FACTS pending facts; its summaries are left out);
 * - `bound`: every fact its own "note" of informative sentences (what
 *   rewriting alone, with no grouping, can buy), and
 * - `oracle`: the facts of every question's evidence put in one note (up to
 *   `--oracle-size` facts), each note the informative sentences of its facts.
 *   It reads the answer key, so it is no strategy: it bounds what any
 *   grouping of these facts into faithful notes can gain in this measure.
 *
 * `npx tsx scripts/eval-consolidation.ts [--data FILE] [--conversations 0-2] [--oracle-size 6]`
 */
import { readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { offlineText } from "../src/consolidation/Consolidator.ts"
import { informative } from "../src/consolidation/Sentences.ts"
import { planGroups } from "../src/consolidation/Planner.ts"
import { MemoryId, OrgId, SpaceId } from "../src/domain/Ids.ts"
import type { IndexedMemory } from "../src/domain/Memory.ts"
import type { Recall } from "../src/domain/SpaceProtocol.ts"
import { extractLocal } from "../src/ingestion/Extractor.ts"
import { type LocomoConversation, parseLocomo } from "../src/retrieval/LocomoEval.ts"
import { selectBlock } from "../src/space/MemoryService.ts"
import { RUN_FACTS } from "../src/space/ConsolidationLoop.ts"
import { makeRecall } from "../src/space/SpaceRecall.ts"
import { SpaceState } from "../src/space/SpaceState.ts"
import { GLOVE_ID, loadGlove } from "../services/embedder/Glove.ts"
import { vectorToBytes } from "../services/store/MemoryRows.ts"

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1]! : fallback
}
const BUDGET = 1000
const oracleSize = Number(arg("--oracle-size", "6"))
const chosen = arg("--conversations", "")
const pick = (_: unknown, i: number) =>
  chosen === "" || chosen.split(",").some((part) => {
    const [from, to] = part.split("-").map(Number)
    return i >= from! && i <= (to ?? from!)
  })
const conversations = parseLocomo(JSON.parse(readFileSync(arg("--data", "../shared/bench/locomo-dev.json"), "utf8"))).filter(pick)
const glove = await loadGlove(process.env.MODELS_DIR ?? join(tmpdir(), "engram-models"))
const space = { orgId: OrgId.make("org_eval"), spaceId: SpaceId.make("eval") }
const embedder = {
  id: GLOVE_ID,
  dimensions: 100,
  embed: (texts: ReadonlyArray<string>) => Effect.succeed(texts.map((text) => glove.embed(text))),
  wordVectors: glove.wordVector,
  wordPart: glove.wordPart
}

const memory = (fields: Partial<IndexedMemory> & Pick<IndexedMemory, "id" | "text" | "position" | "eventTime">): IndexedMemory => ({
  orgId: space.orgId,
  spaceId: space.spaceId,
  documentId: fields.id,
  sourceText: fields.text,
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
  occurredStart: null,
  occurredEnd: null,
  sourceIds: [],
  consolidatedAt: null,
  supersededBy: null,
  createdAt: fields.eventTime,
  updatedAt: fields.eventTime,
  embedding: vectorToBytes(glove.embed(fields.text)),
  embedder: GLOVE_ID,
  ...fields
})

/** The facts the local engine extracts from a conversation's turns, as the service stores them. */
const factsOf = (conversation: LocomoConversation): Array<IndexedMemory> => {
  const facts: Array<IndexedMemory> = []
  for (const turn of conversation.turns) {
    const eventTime = new Date(turn.timestamp)
    for (const extracted of extractLocal({ content: turn.content, eventTime })) {
      facts.push(memory({
        id: MemoryId.make(`fact_${facts.length}`),
        text: extracted.text,
        sourceText: extracted.sourceText,
        entities: extracted.entities,
        metadata: { dia_id: turn.diaId },
        eventTime,
        occurredStart: extracted.occurredStart,
        occurredEnd: extracted.occurredEnd,
        position: facts.length
      }))
    }
  }
  return facts
}

interface Note {
  readonly sources: ReadonlyArray<IndexedMemory>
  readonly text: string
}

const gistOf = (fact: IndexedMemory) => informative(fact.text.replace(/^[^:]{1,40}:\s+/, ""), new Set()) || fact.text

/** The offline planner's notes, planned run by run as the space's loop plans them. */
const plannerNotes = (facts: ReadonlyArray<IndexedMemory>): Array<Note> => {
  const notes = new Map<string, { memory: IndexedMemory; sources: ReadonlyArray<IndexedMemory> }>()
  let next = 0
  for (let start = 0; start < facts.length; start += RUN_FACTS) {
    const known = [...facts.slice(0, start + RUN_FACTS), ...[...notes.values()].map((n) => n.memory)]
    const plan = planGroups(known, facts.slice(start, start + RUN_FACTS).map((f) => f.id), () => MemoryId.make(`note_${next++}`))
    for (const group of plan.groups) {
      const sources = group.facts.map((f) => facts[f.memory.position]!)
      const text = offlineText(group)
      notes.set(group.id, {
        memory: memory({ id: group.id, type: "note", text, position: 0, eventTime: sources[0]!.eventTime, sourceIds: sources.map((s) => s.id) }),
        sources
      })
    }
  }
  return [...notes.values()].map(({ memory, sources }) => ({ sources, text: memory.text }))
}

/** Every fact alone, rewritten to its informative sentences. */
const singletonNotes = (facts: ReadonlyArray<IndexedMemory>): Array<Note> => facts.map((fact) => ({ sources: [fact], text: gistOf(fact) }))

/** The answer key's grouping: each question's evidence in one note (union of overlapping ones, up to `oracleSize` facts). */
const oracleNotes = (facts: ReadonlyArray<IndexedMemory>, conversation: LocomoConversation): Array<Note> => {
  const byDia = new Map<string, Array<IndexedMemory>>()
  for (const fact of facts) {
    const dia = String(fact.metadata["dia_id"])
    byDia.set(dia, [...(byDia.get(dia) ?? []), fact])
  }
  const parent = new Map<string, string>()
  const size = new Map<string, number>()
  const root = (dia: string): string => {
    const up = parent.get(dia) ?? dia
    return up === dia ? dia : root(up)
  }
  for (const question of conversation.questions) {
    const evidence = question.evidence.filter((dia) => byDia.has(dia))
    for (const other of evidence.slice(1)) {
      const [a, b] = [root(evidence[0]!), root(other)]
      if (a === b || (size.get(a) ?? 1) + (size.get(b) ?? 1) > oracleSize) continue
      parent.set(b, a)
      size.set(a, (size.get(a) ?? 1) + (size.get(b) ?? 1))
    }
  }
  const groups = new Map<string, Array<IndexedMemory>>()
  for (const [dia, members] of byDia) groups.set(root(dia), [...(groups.get(root(dia)) ?? []), ...members])
  return [...groups.values()].map((sources) => ({ sources, text: sources.map(gistOf).join(" ") }))
}

const recallOf = (query: string, consolidated: boolean): Recall => ({
  query,
  limit: 100,
  memoryTypes: consolidated ? null : ["fact"],
  userId: null,
  agentId: null,
  sessionId: null,
  tags: null,
  tagsMatch: "any",
  minScore: null,
  preferObservations: consolidated,
  asOf: null,
  queryTime: null,
  mode: "accurate",
  full: false
})

const strategies: ReadonlyArray<readonly [string, (facts: ReadonlyArray<IndexedMemory>, c: LocomoConversation) => Array<Note>]> = [
  ["planner", plannerNotes],
  ["bound: no grouping, informative sentences", singletonNotes],
  [`oracle: each question's evidence in one note (up to ${oracleSize})`, oracleNotes]
]

for (const [name, notesOf] of strategies) {
  const sums = { raw: 0, consolidated: 0, questions: 0 }
  for (const conversation of conversations) {
    const facts = factsOf(conversation)
    const state = new SpaceState(space, embedder, glove.wordVector)
    for (const fact of facts) state.put(fact)
    notesOf(facts, conversation).forEach((note, i) =>
      state.put(memory({
        id: MemoryId.make(`syn_${i}`),
        type: "note",
        text: note.text,
        entities: note.sources.flatMap((s) => s.entities),
        eventTime: note.sources[0]!.eventTime,
        position: facts.length + i,
        sourceIds: note.sources.map((s) => s.id)
      }))
    )
    const credit = (id: string): ReadonlyArray<string> => {
      const found = state.get(id)
      if (found === undefined) return []
      return found.sourceIds.length > 0 ? found.sourceIds.flatMap(credit) : [String(found.metadata["dia_id"])]
    }
    const recall = makeRecall({ space, state, embedder, fromStore: () => Effect.succeed([]) })
    const covered = (query: string, evidence: ReadonlyArray<string>, consolidated: boolean) => {
      const { results } = Effect.runSync(recall(recallOf(query, consolidated)))
      const { kept } = selectBlock(results.map((r) => ({ memory_id: r.memory_id, content: r.content })), BUDGET)
      const seen = new Set(kept.flatMap((r) => credit(r.memory_id)))
      return evidence.filter((dia) => seen.has(dia)).length / evidence.length
    }
    for (const question of conversation.questions) {
      sums.raw += covered(question.question, question.evidence, false)
      sums.consolidated += covered(question.question, question.evidence, true)
      sums.questions++
    }
  }
  const raw = sums.raw / sums.questions
  const consolidated = sums.consolidated / sums.questions
  console.log(
    `${name}: raw ${raw.toFixed(4)}, consolidated ${consolidated.toFixed(4)} (${((consolidated - raw) * 100).toFixed(1)} points; ${sums.questions} questions)`
  )
}
