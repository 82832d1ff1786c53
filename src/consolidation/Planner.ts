/**
 * Which facts become notes, decided offline for either engine. Pending facts
 * are taken in the order they happened; each joins the most similar note of
 * its bucket (same scope, subject and kind) or pairs with the most similar
 * fact not yet in a note, if similar enough, else stays on its own. Two facts
 * giving one attribute of one subject two values always share a note, which
 * states the change. Similarity: the share of a fact's information (IDF
 * weight of its terms and entities) that the other side also carries.
 */
import type { MemoryId } from "../domain/Ids.ts"
import type { Memory } from "../domain/Memory.ts"
import { type AttributeValue, attributesOf, sameValue } from "./Attributes.ts"
import { type FactView, type SynthesisKind, view } from "./Facts.ts"

export const TUNING = {
  /** Share of a fact's information another fact or note must carry for them to share a note. */
  threshold: 0.34,
  /** Facts per note at most: a note is recalled whole, so it stays short. */
  maxSources: 6,
  /** Rarest terms of a fact used to look up candidates. */
  probes: 6,
  /** Terms or entities two facts must share at least. */
  minShared: 2,
  /** Documents the term weights assume beside the space's own (see `weight`). */
  prior: 50,
  /**
   * Candidates a fact is compared with at most, gathered from its rarest
   * terms first: a term thousands of facts share adds nothing a rarer one
   * did not, and comparing with all of them would hold the space up.
   */
  maxCandidates: 300
}

/** The attributes a fact states, per memory object (immutable), so each run reads only new facts. */
const stated = new WeakMap<Memory, ReadonlyArray<AttributeValue>>()
const statedBy = (memory: Memory) => {
  let found = stated.get(memory)
  if (found === undefined) stated.set(memory, (found = attributesOf(memory.text)))
  return found
}

export interface Change {
  readonly attribute: AttributeValue["name"]
  readonly values: ReadonlyArray<{ readonly value: string; readonly time: number; readonly when: string; readonly fact: MemoryId }>
}

export interface GroupPlan {
  /** The note's id: an existing note's, or a new one's. */
  readonly id: MemoryId
  /** The note as it is, when the group rewrites one. */
  readonly existing: Memory | null
  readonly kind: SynthesisKind
  readonly subject: string | null
  readonly facts: ReadonlyArray<FactView>
  readonly change: Change | null
}

export interface GroupsPlan {
  readonly groups: ReadonlyArray<GroupPlan>
  /** The pending facts this run settles (grouped or not). */
  readonly considered: ReadonlyArray<MemoryId>
  /** Older facts whose attribute a newer fact changed. */
  readonly superseded: ReadonlyArray<{ readonly fact: MemoryId; readonly by: MemoryId }>
}

interface Group {
  readonly id: MemoryId
  readonly existing: Memory | null
  readonly bucket: string
  readonly kind: SynthesisKind
  readonly subject: string | null
  readonly facts: Array<FactView>
  readonly weights: Map<string, number>
  change: { attribute: AttributeValue["name"] } | null
  changed: boolean
}

const keys = (fact: FactView) => [...fact.terms, ...[...fact.entities].map((e) => `e:${e}`)]

const isSynthesis = (memory: Memory) => memory.type === "note" || memory.type === "experience"

/**
 * How long the plan runs between two checkpoints, in milliseconds: a large
 * space's plan is made in slices, and a recall that arrives meanwhile waits
 * for the slice in progress only. Slices are timed, not counted: a long
 * turn's facts cost several times a short one's.
 */
export const SLICE_MS = 4

/**
 * The plan, made in slices: the generator pauses (yields) once a slice has
 * run SLICE_MS by `clock` (milliseconds), so its caller can let waiting
 * work run; `planGroups` runs it through at once.
 */
export function* planGroupsInSlices(
  memories: Iterable<Memory>,
  pendingIds: ReadonlyArray<string>,
  newId: () => MemoryId,
  clock: () => number = () => performance.now()
): Generator<void, GroupsPlan> {
  let sliceStarted = clock()
  let steps = 0
  /** Whether the slice has run its time (the clock is read every `every` steps). */
  const due = (every: number) => ++steps % every === 0 && clock() - sliceStarted >= SLICE_MS
  /**
   * The pause. The next slice is timed from the pause, not from the resume:
   * when the caller held the plan longer than a slice (recalls kept coming),
   * the plan takes one step between pauses until they stop, so recall goes
   * first and the plan still moves on at every resume.
   */
  function* pause() {
    sliceStarted = clock()
    yield
  }
  const all = [...memories].filter((m) => m.state === "active")
  const facts = new Map<string, FactView>()
  for (const memory of all) {
    if (memory.type === "fact") facts.set(memory.id, view(memory))
    if (due(64)) yield* pause()
  }

  // Information weight of a term: rare across the space's facts weighs more. The prior keeps a small
  // space's weights even: there, a term every fact shares is still a shared topic.
  const df = new Map<string, number>()
  for (const fact of facts.values()) {
    for (const key of keys(fact)) df.set(key, (df.get(key) ?? 0) + 1)
    if (due(16)) yield* pause()
  }
  const weight = (key: string) => Math.log(1 + (facts.size + TUNING.prior) / ((df.get(key) ?? 0) + 1))
  // A shared entity relates two facts, unless it is someone the space's facts are by (in a conversation, the
  // other speaker's name is everywhere) or it is everywhere anyway.
  const speakers = new Set([...facts.values()].flatMap((f) => (f.subject === null ? [] : [f.subject.toLowerCase()])))
  const telling = (entity: string) => !speakers.has(entity) && (df.get(`e:${entity}`) ?? 0) <= Math.max(4, facts.size * 0.05)

  const groups = new Map<string, Group>()
  const groupOf = new Map<string, Group>()
  /** Candidates by key, per bucket: groups and facts in no group. */
  const byKey = new Map<string, Map<string, Set<string>>>()
  const candidateKey = (kind: "g" | "f", id: string) => `${kind}:${id}`
  const index = (bucket: string, key: string, candidate: string) => {
    let perBucket = byKey.get(bucket)
    if (!perBucket) byKey.set(bucket, (perBucket = new Map()))
    let set = perBucket.get(key)
    if (!set) perBucket.set(key, (set = new Set()))
    set.add(candidate)
  }
  const unindex = (bucket: string, fact: FactView, candidate: string) => {
    const perBucket = byKey.get(bucket)
    for (const key of keys(fact)) perBucket?.get(key)?.delete(candidate)
  }

  const addTo = (group: Group, fact: FactView) => {
    group.facts.push(fact)
    groupOf.set(fact.memory.id, group)
    for (const key of keys(fact)) {
      group.weights.set(key, weight(key))
      index(group.bucket, key, candidateKey("g", group.id))
    }
  }

  // The notes the space has, with the facts behind them.
  for (const note of all.filter(isSynthesis)) {
    const sources = note.sourceIds.flatMap((id) => facts.get(id) ?? [])
    if (sources.length === 0) continue
    const first = sources[0]!
    const group: Group = {
      id: note.id,
      existing: note,
      bucket: first.bucket,
      kind: first.kind,
      subject: first.subject,
      facts: [],
      weights: new Map(),
      change: null,
      changed: false
    }
    for (const source of sources) addTo(group, source)
    groups.set(group.id, group)
    if (due(4)) yield* pause()
  }
  // Facts in no note are candidates too.
  for (const fact of facts.values()) {
    if (due(16)) yield* pause()
    if (groupOf.has(fact.memory.id)) continue
    const candidate = candidateKey("f", fact.memory.id)
    for (const key of keys(fact)) index(fact.bucket, key, candidate)
  }

  // Who states which attribute, per bucket (facts about no subject state none).
  const attributes = new Map<string, ReadonlyArray<AttributeValue>>()
  const stating = new Map<string, Array<FactView>>()
  for (const fact of facts.values()) {
    if (due(16)) yield* pause()
    const found = fact.subject === null ? [] : statedBy(fact.memory)
    attributes.set(fact.memory.id, found)
    for (const attribute of found) {
      const key = `${fact.bucket}|${attribute.name}`
      let list = stating.get(key)
      if (!list) stating.set(key, (list = []))
      list.push(fact)
    }
  }
  const attributesOfFact = (fact: FactView) => attributes.get(fact.memory.id) ?? []
  const valueOf = (fact: FactView, name: AttributeValue["name"]) => attributesOfFact(fact).find((a) => a.name === name)!

  const newGroup = (fact: FactView): Group => {
    const group: Group = {
      id: newId(),
      existing: null,
      bucket: fact.bucket,
      kind: fact.kind,
      subject: fact.subject,
      facts: [],
      weights: new Map(),
      change: null,
      changed: true
    }
    groups.set(group.id, group)
    return group
  }

  const place = (fact: FactView, group: Group) => {
    if (!groupOf.has(fact.memory.id)) unindex(fact.bucket, fact, candidateKey("f", fact.memory.id))
    addTo(group, fact)
    group.changed = true
  }

  const supersededBy = new Map<MemoryId, MemoryId>()
  const pending = pendingIds.flatMap((id) => facts.get(id) ?? []).sort((a, b) => a.time - b.time || a.memory.position - b.memory.position)

  for (const fact of pending) {
    // Each pending fact is compared with up to maxCandidates others: the clock is read after each.
    if (due(1)) yield* pause()
    if (groupOf.has(fact.memory.id)) continue

    // A changed attribute: every fact of the bucket stating it shares one note.
    const changed = attributesOfFact(fact).find((attribute) =>
      (stating.get(`${fact.bucket}|${attribute.name}`) ?? []).some((other) => !sameValue(valueOf(other, attribute.name).value, attribute.value))
    )
    if (changed) {
      const all = stating.get(`${fact.bucket}|${changed.name}`)!
      const home = all.map((other) => groupOf.get(other.memory.id)).find((g) => g?.change?.attribute === changed.name) ??
        newGroup(fact)
      home.change = { attribute: changed.name }
      for (const other of all) if (!groupOf.has(other.memory.id)) place(other, home)
      const newestFirst = [...all].sort((a, b) => b.time - a.time)
      const newest = newestFirst[0]!
      for (const older of newestFirst.slice(1)) {
        const differs = !sameValue(valueOf(older, changed.name).value, valueOf(newest, changed.name).value)
        if (differs && older.memory.supersededBy !== newest.memory.id) supersededBy.set(older.memory.id, newest.memory.id)
      }
      continue
    }

    // The most similar note with room, or fact in no note, of the same bucket; a fact with nothing but
    // pleasantries and questions joins nothing.
    if (fact.gist === "") continue
    // The share is of the fact's words; a shared entity relates facts on its own (see `telling`).
    const total = [...fact.terms].reduce((sum, key) => sum + weight(key), 0)
    if (total === 0 && fact.entities.size === 0) continue
    const factKeys = keys(fact)
    // What each key adds when a candidate shares it, worked out once for all the candidates.
    const shares = factKeys.map((key) => {
      const isEntity = key.startsWith("e:")
      return { key, isEntity, telling: isEntity && telling(key.slice(2)), weight: isEntity ? 0 : weight(key) }
    })
    const probes = [...factKeys].sort((a, b) => weight(b) - weight(a)).slice(0, TUNING.probes)
    const perBucket = byKey.get(fact.bucket)
    const candidates = new Set<string>()
    gather: for (const key of probes) {
      for (const candidate of perBucket?.get(key) ?? []) {
        if (candidates.size >= TUNING.maxCandidates) break gather
        candidates.add(candidate)
      }
    }
    candidates.delete(candidateKey("f", fact.memory.id))
    let best: { candidate: string; score: number } | undefined
    for (const candidate of candidates) {
      const [kind, id] = [candidate.slice(0, 1), candidate.slice(2)]
      let shared = 0
      let count = 0
      let entity = false
      const has = kind === "g"
        ? (key: string) => groups.get(id)!.weights.has(key)
        : (key: string) => facts.get(id)!.terms.has(key) || (key.startsWith("e:") && facts.get(id)!.entities.has(key.slice(2)))
      if (kind === "g") {
        const group = groups.get(id)!
        if (group.change !== null || group.facts.length >= TUNING.maxSources) continue
      } else if (facts.get(id)!.gist === "") {
        continue
      }
      for (const share of shares) {
        if (!has(share.key)) continue
        if (share.isEntity) {
          if (share.telling) entity = true
          continue
        }
        shared += share.weight
        count++
      }
      const score = total === 0 ? 0 : shared / total
      const related = entity || (count >= TUNING.minShared && score >= TUNING.threshold)
      if (related && (best === undefined || score > best.score)) best = { candidate, score }
    }
    if (!best) continue
    const id = best.candidate.slice(2)
    if (best.candidate.startsWith("g:")) {
      place(fact, groups.get(id)!)
    } else {
      const group = newGroup(fact)
      place(facts.get(id)!, group)
      place(fact, group)
    }
  }

  const planned: Array<GroupPlan> = []
  for (const group of groups.values()) {
    if (!group.changed) continue
    const change = group.change
    const values = change === null ? [] : group.facts.flatMap((fact) => {
      const value = attributesOfFact(fact).find((a) => a.name === change.attribute)
      return value ? [{ value: value.value, time: fact.time, when: fact.when, fact: fact.memory.id }] : []
    })
    planned.push({
      id: group.id,
      existing: group.existing,
      kind: group.kind,
      subject: group.subject,
      facts: group.facts,
      change: change === null ? null : { attribute: change.attribute, values }
    })
  }
  return {
    groups: planned,
    considered: pending.map((fact) => fact.memory.id),
    superseded: [...supersededBy].map(([fact, by]) => ({ fact, by }))
  }
}

/** The plan in one go (tests, small spaces). */
export const planGroups = (memories: Iterable<Memory>, pendingIds: ReadonlyArray<string>, newId: () => MemoryId): GroupsPlan => {
  const steps = planGroupsInSlices(memories, pendingIds, newId)
  for (;;) {
    const next = steps.next()
    if (next.done) return next.value
  }
}

/** Notes about one subject, or mentioning one entity, at least this many: a summary describes them. */
export const SUMMARY_MIN_NOTES = 3

export interface SummaryPlan {
  readonly id: MemoryId
  readonly existing: Memory | null
  /** Whom or what it summarises: a subject's name, or `entity:<name>`. */
  readonly key: string
  readonly about: string
  readonly notes: ReadonlyArray<Memory>
  /** The scope it is written under: the notes'. */
  readonly userId: string | null
  readonly agentId: string | null
}

export interface SummariesPlan {
  readonly write: ReadonlyArray<SummaryPlan>
  readonly remove: ReadonlyArray<MemoryId>
}

export const summaryKeyOf = (memory: Memory) => {
  const key = memory.metadata["summary_of"]
  return typeof key === "string" ? key : null
}

/**
 * The summaries the space's notes call for: one per subject with enough notes,
 * one per entity enough notes mention (within one scope). A summary is written
 * when its notes changed, and removed when it is no longer called for.
 */
export const planSummaries = (
  notes: ReadonlyArray<{ readonly memory: Memory; readonly subject: string | null }>,
  summaries: ReadonlyArray<Memory>,
  newId: () => MemoryId
): SummariesPlan => {
  const wanted = new Map<string, { key: string; about: string; notes: Array<Memory>; userId: string | null; agentId: string | null }>()
  const want = (key: string, about: string, note: Memory) => {
    const scoped = `${note.userId ?? ""}|${note.agentId ?? ""}|${key.toLowerCase()}`
    let entry = wanted.get(scoped)
    if (!entry) wanted.set(scoped, (entry = { key, about, notes: [], userId: note.userId, agentId: note.agentId }))
    if (!entry.notes.includes(note)) entry.notes.push(note)
  }
  const subjects = new Set(notes.flatMap((n) => (n.subject === null ? [] : [n.subject.toLowerCase()])))
  for (const { memory, subject } of notes) {
    if (memory.type !== "note") continue
    if (subject !== null) want(subject, subject, memory)
    for (const entity of memory.entities) {
      if (subjects.has(entity.name.toLowerCase())) continue
      want(`entity:${entity.name}`, entity.name, memory)
    }
  }
  const existing = new Map<string, Memory>()
  for (const summary of summaries) {
    const key = summaryKeyOf(summary)
    if (key !== null) existing.set(`${summary.userId ?? ""}|${summary.agentId ?? ""}|${key.toLowerCase()}`, summary)
  }
  const write: Array<SummaryPlan> = []
  for (const [scoped, entry] of wanted) {
    if (entry.notes.length < SUMMARY_MIN_NOTES) continue
    const current = existing.get(scoped) ?? null
    const ordered = [...entry.notes].sort((a, b) => a.position - b.position)
    const unchanged = current !== null && current.sourceIds.length === ordered.length &&
      ordered.every((note, i) => current.sourceIds[i] === note.id && note.updatedAt <= current.updatedAt)
    if (unchanged) continue
    write.push({
      id: current?.id ?? newId(),
      existing: current,
      key: entry.key,
      about: entry.about,
      notes: ordered,
      userId: entry.userId,
      agentId: entry.agentId
    })
  }
  const remove = [...existing].filter(([scoped]) => (wanted.get(scoped)?.notes.length ?? 0) < SUMMARY_MIN_NOTES).map(([, s]) => s.id)
  return { write, remove }
}
