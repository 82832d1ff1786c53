/**
 * The built-in detectors find what a user would call a secret or personal
 * data and leave ordinary text alone (ids, hashes, identifiers, paths, order
 * numbers); each runs in time linear in the text. Custom patterns are refused
 * when they do not compile or could backtrack catastrophically, and run on
 * RE2 anyway. screenText redacts as `[REDACTED:<detector>]` or blocks.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Rule } from "../../src/domain/Rules.ts"
import { type Detector, finder, ibanValid, luhn, MAX_PATTERN_LENGTH, patternProblem } from "../../src/security/Detectors.ts"
import { compile, screenRecord, screenText } from "../../src/security/Screen.ts"

/** What `detector` finds in `text`, as the matched strings. */
const found = (detector: Detector, text: string, pattern: string | null = null) =>
  finder(detector, pattern).find(text).map((span) => text.slice(span.start, span.end))

/** Each of `texts`, alone in a sentence, is found whole. */
const findsEach = (detector: Detector, texts: ReadonlyArray<string>) => {
  for (const text of texts) expect(found(detector, `see ${text} here`), text).toEqual([text])
}

/** None of `texts` is found, alone or in a sentence. */
const findsNone = (detector: Detector, texts: ReadonlyArray<string>) => {
  for (const text of texts) expect(found(detector, `see ${text} here`), text).toEqual([])
}

/** Milliseconds `f` takes. */
const timed = (f: () => unknown) => {
  const started = performance.now()
  f()
  return performance.now() - started
}

const rule = (detector: Detector, action: "redact" | "block", extra: Partial<Rule> = {}): Rule => ({
  id: `rul_${detector}_${action}`,
  name: `${action} ${detector}`,
  detector,
  pattern: null,
  action,
  enabled: true,
  created_at: "2026-01-01T00:00:00.000Z",
  ...extra
})

// Fixed strings shaped like real credentials (random characters, not live keys).
const ANTHROPIC = "sk-ant-api03-Xb7Qm2Lr9Tz4Kp8Wn3Vc6Hy1Jd5Fg0Sa-Qe4Ru7Io2Pl9Mk3Nj6Bh1Gv8Cx5Zt0Ly"
const OPENAI_PROJECT = "sk-proj-Rk4Tz9Wq2Lm7Xc5Vb8Nh3Jp6Gd1Fs0Ka-Yu2Ei7Ow4Qt9Rz3Lx6Mc1Vn8Bk5"
const OPENAI_LEGACY = "sk-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9Cd1Ef3Gh5"
const STRIPE = "sk_live_51Hx9Kq2Lm7Xc5Vb8Nh3Jp6Gd1Fs0KaYu2Ei7Ow4"
const AWS = "AKIAIOSFODNN7EXAMPLE"
const GITHUB = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij12"
const SLACK = "xoxb-2634-1234567890-AbCdEfGhIjKlMnOp"
const GOOGLE = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
const ENGRAM_KEY = "svc_test_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9Cd"
/** No provider's prefix: found for its entropy alone. */
const RANDOM_TOKEN = "Q7vK2mXp9LwR4tZ8nB3cY6hJ1sD5fG0aE2uI"
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY9xLq2Tm4Rz"

const PEM = [
  "-----BEGIN RSA PRIVATE KEY-----",
  "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB",
  "aFDrBz9vFqU4yYb2bS5rS4Yv7qV2gk4XfZQ1DbS8pq==",
  "-----END RSA PRIVATE KEY-----"
].join("\n")

describe("email", () => {
  it("finds addresses, underscores and subdomains included", () => {
    findsEach("email", ["bob@example.com", "bob.smith+tag@mail.example.co.uk", "john_doe@example.com", "x-y%z@sub-domain.example.io"])
  })

  it("leaves handles, hosts without a domain and bare @ alone", () => {
    findsNone("email", ["@handle", "bob@localhost", "a@b.c", "user@", "@example.com"])
  })

  it("takes time linear in the text, even on a long run of address characters without an @", () => {
    expect(timed(() => found("email", "a.".repeat(50_000)))).toBeLessThan(1000)
    expect(timed(() => found("email", "a@a.".repeat(25_000)))).toBeLessThan(1000)
  })
})

describe("phone", () => {
  it("finds international and North American numbers", () => {
    findsEach("phone", ["+1 415 555 2671", "+44 20 7946 0958", "+49 30 901820", "(415) 555-2671", "415-555-2671", "415.555.2671"])
  })

  it("leaves social security numbers, dates, versions and short numbers alone", () => {
    findsNone("phone", ["123-45-6789", "2023-05-07", "v1.2.3", "1234567", "+12", "555 1234", "10.0.0.1"])
  })
})

describe("credit_card", () => {
  it("finds Luhn-valid numbers, spaced, dashed or whole, of 13 to 19 digits", () => {
    expect([luhn("4111111111111111"), luhn("378282246310005"), luhn("6011000000000004")]).toEqual([true, true, true])
    findsEach("credit_card", ["4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111", "3782 822463 10005", "6011000000000004"])
  })

  it("a number that fails the Luhn check is not a card, even with 16 digits grouped like one", () => {
    expect([luhn("4111111111111112"), luhn("1234567890123456")]).toEqual([false, false])
    findsNone("credit_card", ["4111 1111 1111 1112", "1234 5678 9012 3456", "4111111111111112"])
  })

  it("repeated digits, numbers too short or too long, and a longer number holding a card are not cards", () => {
    findsNone("credit_card", ["0000 0000 0000 0000", "4222 2222 22", "41111111111111111111", "order 20240507123456789012"])
  })

  it("finds the card beside other digit groups: a CVV after it, a reference before it, two cards in a row", () => {
    expect(found("credit_card", "card 4111 1111 1111 1111 123 thanks")).toEqual(["4111 1111 1111 1111"])
    expect(found("credit_card", "ref 12 4111 1111 1111 1111")).toEqual(["4111 1111 1111 1111"])
    expect(found("credit_card", "4111 1111 1111 1111 5500 0000 0000 0004")).toEqual(["4111 1111 1111 1111", "5500 0000 0000 0004"])
  })

  it("takes time linear in the text on long runs of digits", () => {
    for (const unit of ["1 ", "1-", "1", "+1 ", "12 34 "]) {
      expect(timed(() => found("credit_card", unit.repeat(100_000 / unit.length))), unit).toBeLessThan(1000)
    }
  })
})

describe("api_key", () => {
  it("finds the key formats of well-known providers, and this service's own keys", () => {
    findsEach("api_key", [ANTHROPIC, OPENAI_PROJECT, OPENAI_LEGACY, STRIPE, AWS, GITHUB, SLACK, GOOGLE, JWT, ENGRAM_KEY])
  })

  it("finds long random tokens by their entropy", () => {
    findsEach("api_key", [RANDOM_TOKEN, AWS_SECRET, `${RANDOM_TOKEN}==`])
    expect(found("api_key", `token=${RANDOM_TOKEN}`)).toEqual([RANDOM_TOKEN])
  })

  it("leaves ids, hashes, identifiers, paths and long words alone", () => {
    findsNone("api_key", [
      "123e4567-e89b-12d3-a456-426614174000", // a UUID
      "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", // a SHA-256
      "da39a3ee5e6b4b0d3255bfef95601890afd80709", // a git commit
      "user_profile_settings_version_2_migration_backup",
      "getUserProfileSettingsForTenant2024",
      "/home/alice/projects/engram2/node_modules/effect/dist",
      "src/components/dashboard/widgets/ChartWidget2",
      "customer_2024_q3_revenue_forecast_v2_final",
      "supercalifragilisticexpialidocious2024",
      "Pneumonoultramicroscopicsilicovolcanoconiosis",
      "sk-hynix-memory-chip-production-plan",
      "short-token-1234"
    ])
  })

  it("a key is redacted to the end of its token, one match even when longer than its format says", () => {
    expect(found("api_key", `Authorization: Bearer ${ENGRAM_KEY}`)).toEqual([ENGRAM_KEY])
    expect(found("api_key", `Bearer ${ENGRAM_KEY}x9, then`)).toEqual([`${ENGRAM_KEY}x9`])
    expect(found("api_key", `${AWS}Z9Q`)).toEqual([`${AWS}Z9Q`])
  })
})

describe("private_key", () => {
  it("finds a PEM private key block whole, and a block cut short up to the end of the text", () => {
    expect(found("private_key", `my key:\n${PEM}\nthanks`)).toEqual([PEM])
    const openssh = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----"
    expect(found("private_key", openssh)).toEqual([openssh])
    const cut = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
    expect(found("private_key", `here: ${cut}`)).toEqual([cut])
  })

  it("leaves public keys and certificates alone", () => {
    findsNone("private_key", [
      "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----"
    ])
  })
})

describe("iban", () => {
  it("finds IBANs whose ISO 13616 checksum holds, grouped or not, in either case", () => {
    expect([ibanValid("DE89370400440532013000"), ibanValid("GB82 WEST 1234 5698 7654 32")]).toEqual([true, true])
    findsEach("iban", ["DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432", "FR14 2004 1010 0505 0001 3M02 606", "de89 3704 0044 0532 0130 00"])
  })

  it("a wrong checksum or a code shaped like an IBAN is not one", () => {
    findsNone("iban", ["DE89 3704 0044 0532 0130 01", "AB12 CDEF GHIJ KLMN", "GB82 WEST 1234"])
  })
})

describe("us_ssn", () => {
  it("finds dashed social security numbers", () => {
    findsEach("us_ssn", ["123-45-6789", "078-05-1120"])
  })

  it("leaves numbers no SSN can have, undashed numbers and longer digit runs alone", () => {
    findsNone("us_ssn", ["000-12-3456", "666-12-3456", "900-12-3456", "123-00-4567", "123-45-0000", "123456789", "1123-45-6789", "123-45-67890"])
  })
})

describe("custom patterns", () => {
  it("refuse what does not compile, is empty, too long or matches the empty string", () => {
    for (const pattern of ["[", "a{2,1}", "(unclosed", "", "a*", "x|", "a".repeat(MAX_PATTERN_LENGTH + 1)]) {
      expect(patternProblem(pattern), JSON.stringify(pattern).slice(0, 40)).toBeDefined()
    }
  })

  it("refuse patterns that can backtrack catastrophically: a repeated group that itself repeats", () => {
    for (const pattern of ["(a+)+$", "(a*)*b", "^(\\w+\\s?)*$", "(x+x+)+y", "(.*a){20}", "([a-z0-9]+-?)+@"]) {
      expect(patternProblem(pattern), pattern).toMatch(/backtrack catastrophically/)
    }
  })

  it("refuse lookaround and backreferences, which a linear-time engine cannot run", () => {
    for (const pattern of ["(?<=key=)\\w+", "secret(?=:)", "(a)\\1", "(?<n>a)\\k<n>"]) {
      expect(patternProblem(pattern), pattern).toMatch(/no lookaround, no backreferences/)
    }
  })

  it("say why without repeating the pattern or a piece of it", () => {
    for (const pattern of ["(unclosedMARKER", "[MARKER", "(?<=MARKER)x", "MARKER\\1(a)"]) {
      const problem = patternProblem(pattern)
      expect(problem, pattern).toMatch(/^pattern does not compile/)
      expect(problem, pattern).not.toContain("MARKER")
    }
  })

  it("accept ordinary patterns, a leading (?i) included, and find what they match", () => {
    for (const pattern of ["ORDER-\\d{6}", "\\bACME-[A-Z0-9]{8}\\b", "(?i)project-[a-z]+", "(?:foo|bar)+", "password\\s*[:=]\\s*\\S+"]) {
      expect(patternProblem(pattern), pattern).toBeUndefined()
    }
    expect(found("regex", "orders ORDER-123456 and ORDER-12345", "ORDER-\\d{6}")).toEqual(["ORDER-123456"])
    expect(found("regex", "Project-Falcon and project-owl", "(?i)project-[a-z]+")).toEqual(["Project-Falcon", "project-owl"])
    expect(found("regex", "café 😀 éé", "é+")).toEqual(["é", "éé"])
  })

  it("run in time linear in the text, even a pattern the static check lets through", () => {
    for (const pattern of ["(a|a)+$", "(\\d|\\w)+$", "\\d+\\d+x"]) {
      const text = `${(pattern.includes("d") ? "1" : "a").repeat(100_000)}!`
      expect(timed(() => found("regex", text, pattern)), pattern).toBeLessThan(2000)
    }
  })
})

describe("every built-in detector", () => {
  it("takes time linear in the text on hostile input", () => {
    const hostile = ["a.", "a-", "1 ", "1-", "+1 ", "AB12 ", "aB3/", "sk-", "a@", "-----BEGIN PRIVATE KEY-----"]
    for (const detector of ["email", "phone", "credit_card", "api_key", "private_key", "iban", "us_ssn"] as const) {
      for (const unit of hostile) {
        expect(timed(() => found(detector, unit.repeat(100_000 / unit.length))), `${detector} on ${unit}`).toBeLessThan(1000)
      }
    }
  })
})

describe("screenText", () => {
  it("replaces each match of a redact rule by [REDACTED:<detector>] and says which detectors redacted", () => {
    const rules = compile([rule("email", "redact"), rule("api_key", "redact"), rule("credit_card", "redact")])
    const screened = screenText(rules, `Mail bob@example.com, key ${ANTHROPIC}, card 4111 1111 1111 1111, mail ann@example.org.`)
    expect(screened).toEqual({
      text: "Mail [REDACTED:email], key [REDACTED:api_key], card [REDACTED:credit_card], mail [REDACTED:email].",
      redacted: ["email", "api_key", "credit_card"],
      blockedBy: undefined,
      flagged: []
    })
  })

  it("a regex rule's matches read [REDACTED:regex]; overlapping matches become one, the longer first", () => {
    const rules = compile([rule("regex", "redact", { pattern: "ACME-\\d{4}" }), rule("regex", "redact", { id: "rul_2", pattern: "ACME-\\d{4}-[A-Z]{2}" })])
    expect(screenText(rules, "ticket ACME-1234-XY done").text).toBe("ticket [REDACTED:regex] done")
  })

  it("a matching block rule refuses the text whole and names itself; the text is not redacted", () => {
    const blocking = rule("us_ssn", "block")
    const rules = compile([rule("email", "redact"), blocking])
    const text = "bob@example.com has SSN 123-45-6789"
    expect(screenText(rules, text)).toEqual({ text, redacted: [], blockedBy: blocking, flagged: [] })
    expect(screenText(rules, "bob@example.com only").blockedBy).toBeUndefined()
  })

  it("text without matches, no rules and disabled rules leave the text as it is", () => {
    const text = `plain text with ${ANTHROPIC}`
    expect(screenText(compile([rule("email", "redact")]), text)).toEqual({ text, redacted: [], blockedBy: undefined, flagged: [] })
    expect(screenText([], text).text).toBe(text)
    expect(compile([rule("api_key", "redact", { enabled: false })])).toEqual([])
  })

  it("screenRecord redacts every string of the metadata at any depth, keys and other values kept", () => {
    const found = { redacted: new Set<Detector>(), flagged: new Set<Detector>(), blockedBy: undefined }
    const metadata = { note: `key ${GITHUB}`, nested: { list: ["ok", `bob@example.com`, 3, true, null] }, count: 2 }
    expect(screenRecord(compile([rule("api_key", "redact"), rule("email", "redact")]), metadata, found)).toEqual({
      note: "key [REDACTED:api_key]",
      nested: { list: ["ok", "[REDACTED:email]", 3, true, null] },
      count: 2
    })
    expect([...found.redacted].sort()).toEqual(["api_key", "email"])
  })
})
