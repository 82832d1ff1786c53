/**
 * Every wire shape of a memory, made from the domain model in one place, so
 * the record answer, the list, retrieve and the profile view agree on every
 * field (event times included).
 */
import type { MemoryItem, RetrieveItem, StoredMemory } from "./Memories.ts"
import { type Memory, occurredEnd, occurredStart } from "./Memory.ts"
import type { ProfileMemory } from "./Profiles.ts"

const entityNames = (memory: Memory) => memory.entities.map((e) => e.name)

/** An item of `GET .../memories`, and what PATCH answers. */
export const listItem = (memory: Memory): MemoryItem => ({
  id: memory.id,
  text: memory.text,
  context: memory.context,
  date: memory.eventTime.toISOString(),
  type: memory.type,
  state: memory.state,
  entities: entityNames(memory),
  metadata: memory.metadata,
  tags: [...memory.tags],
  source_ids: [...memory.sourceIds],
  document_id: memory.documentId,
  user_id: memory.userId,
  agent_id: memory.agentId,
  session_id: memory.sessionId,
  member_id: memory.memberId,
  occurred_start: occurredStart(memory).toISOString(),
  occurred_end: occurredEnd(memory).toISOString(),
  created_at: memory.createdAt.toISOString(),
  updated_at: memory.updatedAt.toISOString()
})

/** A memory of a synchronous record's answer. */
export const storedMemory = (memory: Memory): typeof StoredMemory.Type => ({
  memory_id: memory.id,
  content: memory.text,
  memory_type: memory.type,
  entities: entityNames(memory),
  occurred_start: occurredStart(memory).toISOString(),
  occurred_end: occurredEnd(memory).toISOString(),
  state: memory.state,
  created_at: memory.createdAt.toISOString()
})

/** A retrieve result; `relevance_score` is null outside ranked recall. */
export const retrieveItem = (memory: Memory, score: number | null): RetrieveItem => ({
  memory_id: memory.id,
  content: memory.text,
  relevance_score: score,
  memory_type: memory.type,
  entities: entityNames(memory),
  occurred_start: occurredStart(memory).toISOString(),
  occurred_end: occurredEnd(memory).toISOString(),
  metadata: memory.metadata,
  created_at: memory.createdAt.toISOString()
})

/** The user-profile view: the list item with `entities` as one comma-separated string. */
export const profileMemory = (memory: Memory): ProfileMemory => ({
  ...listItem(memory),
  entities: entityNames(memory).join(", ")
})
