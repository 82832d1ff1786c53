import { describe, expect, it } from "vitest"
import { extractLocal } from "../../src/ingestion/Extractor.ts"
import { informativeAnswer, isAssistantSpeaker } from "../../src/ingestion/Informative.ts"
import { answer, NOTHING_REMEMBERED } from "../../src/models/LocalEngine.ts"

const at = new Date("2023-05-08T13:56:00Z") // a Monday

/** What the proxy records for an answer, and what the extractor keeps of it. */
const storedAnswer = (text: string, speaker?: string) =>
  extractLocal({ content: `Assistant: ${text}`, eventTime: at, speaker }).map((m) => m.text)

const ask = (question: string, memories: ReadonlyArray<string>) =>
  answer({ system: "", messages: [{ role: "user", content: question }], memories, extra: {} })

describe("what of an assistant's answer is remembered", () => {
  it("stores nothing of an answer that tells nothing about the user or the world", () => {
    const nonAnswers = [
      "I can't help with that.",
      "I’m sorry, but I cannot help with that request.",
      "I'm sorry, I cannot provide medical advice.",
      "I'm unable to browse the internet.",
      "I'm afraid I can't do that.",
      "I don't know.",
      "Honestly, I don't know.",
      "I'm not sure.",
      "I'm not sure what you mean. Could you clarify?",
      "I don't have that information.",
      "I don't have access to your calendar.",
      "I don't remember you telling me that.",
      "I have no stored memories about that yet.",
      "I have no idea.",
      "There is no information about that in my memory.",
      "No relevant memories found.",
      "As an AI, I don't have personal opinions.",
      "Sorry about that! Is there anything else I can help with?",
      "You're welcome! Let me know if you need anything else.",
      "Happy to help! Hope this helps.",
      "I'm sorry to hear that.",
      "What would you like to know?",
      "Could you tell me more about your trip?",
      "Sure!",
      "That sounds exciting.",
      "That sounds exciting. Do you want tips for seeing the northern lights?",
      "How exciting!",
      "What a great idea!",
      "It's so lovely."
    ]
    for (const text of nonAnswers) {
      expect(informativeAnswer(text), text).toBe("")
      expect(storedAnswer(text), text).toEqual([])
    }
  })

  it("stores nothing of the built-in engine's own answers: its non-answer, and its quotes of memories already stored", () => {
    expect(ask("Where do I live?", [])).toBe(NOTHING_REMEMBERED)
    expect(storedAnswer(NOTHING_REMEMBERED)).toEqual([])
    const quoted = ask("Where does Rex run?", ["Rex runs on the beach every morning.", "Rex is a beagle."])
    expect(quoted.startsWith("From memory:")).toBe(true)
    expect(storedAnswer(quoted)).toEqual([])
    const one = ask("Where does Rex run?", ["Rex runs on the beach every morning."])
    expect(one).toBe("From memory: Rex runs on the beach every morning.")
    expect(storedAnswer(one)).toEqual([])
  })

  it("keeps the informative sentences of a hedged or polite answer, the hedge cut", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["I'm not sure, but the museum opens at 9.", "The museum opens at 9."],
      ["I'm not sure, but I think the museum opens at 9.", "I think the museum opens at 9."],
      ["Sorry, the museum is closed on Mondays.", "The museum is closed on Mondays."],
      ["I'm sorry for the wait, your order ships on Monday.", "Your order ships on Monday."],
      ["Unfortunately the museum is closed on Mondays.", "The museum is closed on Mondays."],
      ["The museum opens at 9, but I'm not sure about Sundays.", "The museum opens at 9."],
      ["Sure! The museum opens at 9 and closes at 5. Would you like directions?", "The museum opens at 9 and closes at 5."],
      ["I don't know where your keys are, but you usually leave them in the kitchen.", "You usually leave them in the kitchen."],
      ["Great question! Paris is the capital of France. Let me know if you need more.", "Paris is the capital of France."],
      ["That sounds exciting! The northern lights are best seen from late September to March.", "The northern lights are best seen from late September to March."],
      ["I'm sorry to hear that. Losing a pet is hard.\n\nYou could plant a tree for Rex.", "Losing a pet is hard.\n\nYou could plant a tree for Rex."]
    ]
    for (const [said, kept] of cases) {
      expect(informativeAnswer(said), said).toBe(kept)
      expect(storedAnswer(said), said).toEqual([`Assistant: ${kept}`])
    }
  })

  it("leaves an informative answer exactly as written, lists included", () => {
    for (const said of [
      "Your dentist appointment is on 12 May at 3pm.",
      "Caroline likes tea, but she prefers coffee.",
      "Here are some ideas:\n- Visit the Louvre\n- Try a crêpe by the Seine"
    ]) {
      expect(informativeAnswer(said)).toBe(said)
      expect(storedAnswer(said)).toEqual([`Assistant: ${said}`])
    }
  })

  it("stores an assistant's words as its own, behind its label, never 'Assistant have ...'", () => {
    expect(storedAnswer("I have booked a table for two at Nopa on Friday.", "ana"))
      .toEqual(["Assistant: I have booked a table for two at Nopa on Friday."])
    expect(storedAnswer("I'm glad the Assistant API suits you; I've noted your budget of $40.", "ana"))
      .toEqual(["Assistant: I'm glad the Assistant API suits you; I've noted your budget of $40."])
    // Relative dates are still resolved: only the first-person rewrite is left out.
    const [memory] = extractLocal({ content: "Assistant: I booked the dentist and the visit is tomorrow at 10.", eventTime: at, speaker: "ana" })
    expect(memory!.text).toBe("Assistant: I booked the dentist and the visit is on 9 May 2023 at 10.")
    expect(memory!.speaker).toBe("Assistant")
    expect(memory!.text).not.toMatch(/Assistant (have|is|has)\b/)
  })

  it("holds only assistant labels to the rule: a person's 'I don't know ...' is a fact about them", () => {
    expect(["Assistant", "assistant", "AI", "Bot", "Agent"].every(isAssistantSpeaker)).toBe(true)
    expect(["Caroline", "Assistant Manager", "Aiden"].some(isAssistantSpeaker)).toBe(false)
    expect(extractLocal({ content: "I don't know how to swim.", eventTime: at, speaker: "ana" }).map((m) => m.text))
      .toEqual(["Ana doesn't know how to swim."])
    expect(extractLocal({ content: "Caroline: I'm not sure I want kids.", eventTime: at }).map((m) => m.text))
      .toEqual(["Caroline is not sure Caroline wants kids."])
    expect(extractLocal({ content: "I can't eat gluten, sorry!", eventTime: at }).map((m) => m.text))
      .toEqual(["I can't eat gluten, sorry!"])
    expect(extractLocal({ content: "I have no siblings.", eventTime: at, speaker: "ana" })).toHaveLength(1)
    // An agent's own write is a memory it chose to keep: "I can't deploy on Fridays" is a rule it learned.
    expect(extractLocal({ content: "I can't deploy on Fridays.", eventTime: at, fromAgent: true })).toHaveLength(1)
  })
})
