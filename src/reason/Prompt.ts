/**
 * The system prompt of a synthesis: the space's mission and disposition in
 * words, the rules of answering from memory, and the recalled memories as a
 * fenced section of data (src/security/Fence.ts), after the instructions. Pure, so what a model is told can be read in one place.
 */
import type { Disposition, StoredSpaceProfile } from "../domain/Profiles.ts"

/** One sentence per level, 1 to 5, for each trait of the disposition. */
const WORDS: { readonly [K in keyof Disposition]: readonly [string, string, string, string, string] } = {
  skepticism: [
    "Take the memories at face value.",
    "Trust the memories unless they plainly contradict each other.",
    "Weigh the memories with ordinary care and mention a contradiction when you see one.",
    "Question the memories: point out contradictions and claims that rest on a single memory.",
    "Be strongly skeptical: treat every claim as unverified until several memories agree, and say how sure you are."
  ],
  literalism: [
    "Read the question loosely and answer what the asker most likely wants, drawing reasonable inferences.",
    "Interpret the question generously and allow sensible inferences from the memories.",
    "Answer the question as asked, with inferences only where the memories clearly support them.",
    "Keep to the wording of the question and to what the memories state; flag any inference as one.",
    "Be strictly literal: answer exactly what was asked and state only what the memories say, with no inference."
  ],
  empathy: [
    "Ignore the emotional side; report facts only.",
    "Mention feelings only when they change the answer.",
    "Acknowledge feelings and relationships where the memories show them.",
    "Give weight to the feelings, relationships and wellbeing the memories reveal.",
    "Weigh emotion heavily: put the people, their feelings and relationships at the centre of the answer."
  ]
}

export const describeDisposition = (disposition: Disposition): ReadonlyArray<string> =>
  (["skepticism", "literalism", "empathy"] as const).map((trait) =>
    `${trait[0]!.toUpperCase()}${trait.slice(1)} ${disposition[trait]}/5: ${WORDS[trait][disposition[trait] - 1]}`
  )

export interface PromptInput {
  readonly spaceName: string
  readonly profile: StoredSpaceProfile
  /** The fenced memory section, best first; empty when nothing was recalled. */
  readonly block: string
  /** Set when every memory is about one user (ask). */
  readonly userId?: string | undefined
}

export const systemPrompt = (input: PromptInput): string =>
  [
    `You answer questions from the long-term memory of the space "${input.spaceName}".`,
    ...(input.profile.mission.trim() === "" ? [] : [`Mission of this space: ${input.profile.mission.trim()}`]),
    "Disposition:",
    ...describeDisposition(input.profile.disposition).map((line) => `- ${line}`),
    ...(input.userId === undefined ? [] : [`Every memory below was recorded about the user "${input.userId}".`]),
    "Answer only from the memories below. When they do not answer the question, say so plainly; never invent.",
    "Refer to a memory by its number when that helps the reader check the answer.",
    "",
    input.block === "" ? "Memories: none were recalled." : input.block
  ].join("\n")

/** The second call of a thorough pass: the same prompt, and the draft to check against the memories. */
export const reviewPrompt = (input: PromptInput, draft: string): string =>
  [
    systemPrompt(input),
    "",
    "A first draft answer follows. Check every claim in it against the memories: remove what they do not support,",
    "add what they answer that the draft missed, and reply with the final answer only.",
    "",
    `Draft:\n${draft}`
  ].join("\n")
