/**
 * The MCP tools' arguments as the SDK advertises them (JSON Schema from zod).
 * The bounds match the HTTP API's; each tool then decodes its arguments with
 * the API's own Schema (`src/domain`), so the two refuse the same input.
 */
import * as z from "zod"

const spaceId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/)
  .describe("The memory space: 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit.")

const scope = (what: string) => z.string().min(1).max(256).optional().describe(what)

const scopes = {
  user_id: scope("The end user this memory is about or for. Partitions memories within the space."),
  agent_id: scope("The agent that wrote or reads the memory. Partitions memories within the space."),
  session_id: scope("The conversation or session. Partitions memories within the space.")
}

const memoryType = z.enum(["fact", "note", "experience", "summary"])

export const RecordArgs = z.strictObject({
  space_id: spaceId.describe("The memory space to write to; created on first use."),
  content: z.string().min(1).max(100_000).describe("Text to remember: the durable facts are extracted from it and stored."),
  timestamp: z
    .string()
    .optional()
    .describe("When the content happened (ISO 8601, e.g. 2024-05-07T10:00:00Z); relative dates in the text resolve against it. Default: now."),
  ...scopes,
  metadata: z.record(z.string(), z.unknown()).optional().describe("Key-value data kept with each stored memory."),
  tags: z.array(z.string().min(1).max(100)).max(50).optional().describe("Up to 50 tags; the prefix svc: is reserved.")
})

export const RetrieveArgs = z.strictObject({
  space_id: spaceId,
  query: z.string().min(1).max(10_000).describe("A natural-language question or keywords."),
  limit: z.number().int().min(1).max(100).optional().describe("How many memories to return, 1-100; default 10."),
  ...scopes,
  memory_type: z
    .union([memoryType, z.array(memoryType)])
    .optional()
    .describe("Only these memory types (fact, note, experience, summary); default all."),
  format: z
    .enum(["results", "block"])
    .optional()
    .describe("results (default): ranked memories with scores. block: also a numbered plain-text context ready for a prompt.")
})

export const ListSpacesArgs = z.strictObject({
  limit: z.number().int().min(1).max(1000).optional().describe("Page size, 1-1000; default 100."),
  offset: z.number().int().min(0).optional().describe("How many spaces to skip; default 0.")
})

export const GetModelArgs = z.strictObject({
  model: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("A full model id, a short name, or a tier (fast, balanced). Omit for the default model."),
  space_id: z.string().min(1).max(200).optional().describe("With model_id: the space whose memory model to read."),
  model_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe("With space_id: a memory model (a standing synthesis the space keeps fresh) instead of a catalog entry.")
})

const model = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe("The model that answers: a full id, a short name or a tier (fast, balanced). Default: the space's reason setting, else the platform default.")

export const ReasonArgs = z.strictObject({
  space_id: spaceId,
  query: z.string().min(1).max(10_000).describe("The question to answer from the space's memories."),
  model,
  depth: z
    .enum(["quick", "standard", "thorough"])
    .optional()
    .describe("quick: one recall; standard (default): also follows the entities the first recall names; thorough: wider, and a second pass reviews the answer.")
})

export const GetProfileArgs = z.strictObject({ space_id: spaceId })

export const GetUserProfileArgs = z.strictObject({
  space_id: spaceId,
  user_id: z.string().min(1).max(256).describe("The user_id the memories were written under."),
  limit: z.number().int().min(1).max(200).optional().describe("Memories per page, 1-200; default 50."),
  offset: z.number().int().min(0).optional().describe("How many memories to skip; default 0."),
  memory_type: memoryType
    .optional()
    .describe("Only this layer: note (the synthesized layer) or fact (facts not yet consolidated). Omit for the collapsed view."),
  format: z.enum(["results", "block"]).optional().describe("block: also a numbered plain-text context of the memories."),
  context_max_tokens: z.number().int().min(1).optional().describe("With format block: approximate ceiling of the context.")
})
