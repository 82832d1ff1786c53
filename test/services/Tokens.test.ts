import { describe, expect, it } from "vitest"
import { randomBase62 } from "../../services/secrets/Tokens.ts"

describe("randomBase62", () => {
  it("gives ids of the asked length, each drawn anew, every character about as often as any other", () => {
    const ids = Array.from({ length: 20_000 }, () => randomBase62(20))
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9]{20}$/)
    // Bytes taken from a pool are never given twice: no two ids alike.
    expect(new Set(ids).size).toBe(ids.length)
    const counts = new Map<string, number>()
    for (const id of ids) for (const char of id) counts.set(char, (counts.get(char) ?? 0) + 1)
    expect(counts.size).toBe(62)
    // 400,000 characters: about 6,452 each, a standard deviation of about 80.
    const expected = (20_000 * 20) / 62
    for (const count of counts.values()) expect(Math.abs(count - expected)).toBeLessThan(expected * 0.1)
  })

  it("serves lengths longer than the pool holds", () => {
    expect(randomBase62(10_000)).toMatch(/^[A-Za-z0-9]{10000}$/)
    expect(randomBase62(0)).toBe("")
  })
})
