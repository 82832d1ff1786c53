/**
 * The sweep of spent OAuth rows, against the real store of each profile: rows
 * made through the repository at known times, the sweep's step called at
 * later times, what remains read back with SQL; and the loop's supervision on
 * the TestClock.
 */
import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Duration, Effect, Logger, Option, Schema, TestClock } from "effect"
import { OAuthSweep, supervise, type SweepStep } from "../../src/oauth/OAuthSweep.ts"
import { digest, randomBase62 } from "../../services/secrets/Tokens.ts"
import { type NewToken, OAuthRepo } from "../../services/store/OAuthRepo.ts"
import { type Account, call, signup } from "../support/Http.ts"
import { REDIRECT } from "../support/McpOAuthProvider.ts"
import { eachProfile } from "../support/Suite.ts"

const HOUR = 3600_000
const DAY = 24 * HOUR

const baseUrl = Effect.map(Effect.serviceOption(HttpServer.HttpServer), (server) =>
  HttpServer.formatAddress(Option.getOrThrow(server).address).replace("//0.0.0.0:", "//127.0.0.1:"))

const Ids = Schema.Array(Schema.Struct({ id: Schema.String }))

/** The ids of the client's grants, of their tokens (by digest) and codes (by digest) still in the store. */
const remaining = (clientId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const read = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      statement.pipe(Effect.flatMap(Schema.decodeUnknown(Ids)), Effect.map((rows) => rows.map((row) => row.id).sort()), Effect.orDie)
    return {
      grants: yield* read(sql`SELECT id FROM oauth_grants WHERE client_id = ${clientId}`),
      tokens: yield* read(sql`SELECT t.token_hash AS id FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE g.client_id = ${clientId}`),
      codes: yield* read(sql`SELECT c.code_hash AS id FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id WHERE g.client_id = ${clientId}`)
    }
  })

/**
 * One client's grants in every state the sweep tells apart, made at `t0`
 * (real time: the node's own sweep, at start and hourly, finds nothing
 * of them to delete within the grace period).
 */
const seed = (account: Account, resource: string, t0: number) =>
  Effect.gen(function*() {
    const repo = yield* OAuthRepo
    const clientId = `mcpc_${randomBase62(16)}`
    yield* repo.createClient({ id: clientId, clientName: "Sweep test", redirectUris: [REDIRECT], now: new Date(t0) })
    const secret = (prefix: string) => `${prefix}${randomBase62(43)}`
    const at = (offset: number) => new Date(t0 + offset)
    const grant = (label: string, created: number, tokens: Record<string, { kind: "access" | "refresh"; expires: number }> = {}) =>
      Effect.gen(function*() {
        const id = `grt_${label}_${randomBase62(8)}`
        const code = digest(secret("mcp_ac_"))
        yield* repo.createGrant(
          { id, clientId, orgId: account.orgId, userId: account.userId, scope: "memories:read memories:write", spaces: null, resource, now: at(created) },
          { hash: code, redirectUri: REDIRECT, codeChallenge: "x".repeat(43), expiresAt: at(created + 60_000) }
        )
        const raw = Object.fromEntries(Object.keys(tokens).map((name) => [name, secret(tokens[name]!.kind === "access" ? "mcp_at_" : "mcp_rt_")]))
        const rows: Array<NewToken> = Object.entries(tokens).map(([name, t]) => ({ hash: digest(raw[name]!), kind: t.kind, expiresAt: at(t.expires) }))
        if (rows.length > 0) yield* repo.issueTokens(id, rows, at(created))
        return { id, code, raw, hash: (name: string) => digest(raw[name]!) }
      })
    const live = yield* grant("live", 0, {
      spentAccess: { kind: "access", expires: HOUR },
      access: { kind: "access", expires: 9 * DAY + 12 * HOUR },
      usedRefresh: { kind: "refresh", expires: 5 * DAY },
      refresh: { kind: "refresh", expires: 30 * DAY }
    })
    // The retired refresh token of a rotation: used, kept until it expires.
    const rotated = yield* repo.rotateRefresh(live.hash("usedRefresh"), at(HOUR), [])
    expect(rotated._tag).toBe("Rotated")
    const revokedOld = yield* grant("revoked_old", 0, { access: { kind: "access", expires: HOUR }, refresh: { kind: "refresh", expires: 30 * DAY } })
    yield* repo.revokeGrant(revokedOld.id, at(8 * DAY))
    const revokedRecent = yield* grant("revoked_recent", 0, { access: { kind: "access", expires: HOUR }, refresh: { kind: "refresh", expires: 30 * DAY } })
    yield* repo.revokeGrant(revokedRecent.id, at(9 * DAY + 12 * HOUR))
    const ended = yield* grant("ended", 0, { access: { kind: "access", expires: HOUR }, refresh: { kind: "refresh", expires: 8 * DAY } })
    const abandoned = yield* grant("abandoned", 0)
    const pending = yield* grant("pending", 9 * DAY + 23 * HOUR)
    return { clientId, live, revokedOld, revokedRecent, ended, abandoned, pending }
  })

const MCP = { accept: "application/json, text/event-stream" }
const toolsList = (token: string) =>
  Effect.map(call("POST", "/mcp", { token, json: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }, headers: MCP }), (r) => r.status)

const zero: Omit<SweepStep, "more"> = { codes: 0, tokens: 0, grants: 0 }

eachProfile("the OAuth sweep", (it) => {
  it.scoped("deletes expired codes and tokens and ended grants a day after they stopped counting, and keeps the rest usable", () =>
    Effect.gen(function*() {
      const account = yield* signup("sweep")
      const resource = `${yield* baseUrl}/mcp`
      const t0 = Date.now()
      const rows = yield* seed(account, resource, t0)
      const sweep = yield* OAuthSweep
      const before = yield* remaining(rows.clientId)
      expect(before.grants).toHaveLength(6)
      expect(before.codes).toHaveLength(6)
      expect(before.tokens).toHaveLength(10)
      expect(yield* toolsList(rows.live.raw["spentAccess"]!)).toBe(200)

      // An hour on, everything is spent or not yet, but within the day's grace: nothing goes.
      expect(yield* sweep.step(new Date(t0 + HOUR))).toEqual({ ...zero, more: false })
      expect(yield* remaining(rows.clientId)).toEqual(before)

      // Ten days on (cutoff: day 9): codes of day 0, tokens expired by day 9, grants revoked by then or left with no refresh token.
      const swept = yield* sweep.step(new Date(t0 + 10 * DAY))
      expect(swept).toEqual({ codes: 5, tokens: 6, grants: 3, more: false })
      const after = yield* remaining(rows.clientId)
      expect(after.grants).toEqual([rows.live.id, rows.revokedRecent.id, rows.pending.id].sort())
      expect(after.codes).toEqual([rows.pending.code])
      expect(after.tokens).toEqual([rows.live.hash("access"), rows.live.hash("refresh"), rows.revokedRecent.hash("refresh")].sort())
      // A second sweep at the same time finds nothing more.
      expect(yield* sweep.step(new Date(t0 + 10 * DAY))).toEqual({ ...zero, more: false })
      // The live grant's tokens still work; its deleted one is an unknown token now.
      expect(yield* toolsList(rows.live.raw["access"]!)).toBe(200)
      expect(yield* toolsList(rows.live.raw["spentAccess"]!)).toBe(401)
      const refreshed = yield* call("POST", "/oauth/token", {
        raw: new URLSearchParams({ grant_type: "refresh_token", refresh_token: rows.live.raw["refresh"]!, client_id: rows.clientId }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" }
      })
      expect(refreshed.status, refreshed.text).toBe(200)

      // Forty days on everything has ended. A batch of one comes back full (more to do); three sweeps racing to
      // finish it (as every node of a cluster may) fail nothing and delete each grant once.
      const later = new Date(t0 + 40 * DAY)
      const first = yield* sweep.step(later, 1)
      expect(first.more).toBe(true)
      const drain = Effect.gen(function*() {
        let grants = 0
        while (true) {
          const step = yield* sweep.step(later, 1)
          grants += step.grants
          if (!step.more) return grants
        }
      })
      const drained = yield* Effect.all([drain, drain, drain], { concurrency: "unbounded" })
      expect(first.grants + drained.reduce((a, b) => a + b, 0)).toBe(3)
      expect(yield* remaining(rows.clientId)).toEqual({ grants: [], tokens: [], codes: [] })
    }).pipe(Effect.provide([OAuthSweep.Default, OAuthRepo.Default])), 120_000)
})

it.scoped("the sweep loop logs a failed step and retries it with backoff, drains while there is more, then waits its interval", () =>
  Effect.gen(function*() {
    const warnings: Array<string> = []
    const capture = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
    })
    let calls = 0
    const step = Effect.suspend(() => {
      calls++
      return calls <= 2 ? Effect.fail("the store is down") : Effect.succeed({ ...zero, grants: 1, more: calls === 3 })
    })
    yield* supervise(step, Duration.hours(1)).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
    yield* TestClock.adjust(Duration.millis(1))
    expect(calls).toBe(1)
    expect(warnings).toEqual([expect.stringMatching(/^OAuth sweep step failed \(1 in a row\); retrying in/)])
    // The first retry comes within 250 ms (200 ms with jitter), the second within 500 ms.
    yield* TestClock.adjust(Duration.millis(250))
    expect(calls).toBe(2)
    expect(warnings[1]).toMatch(/\(2 in a row\)/)
    yield* TestClock.adjust(Duration.millis(500))
    // It succeeded with more to do, so it ran again at once; then it waits an hour.
    expect(calls).toBe(4)
    yield* TestClock.adjust(Duration.minutes(59))
    expect(calls).toBe(4)
    yield* TestClock.adjust(Duration.minutes(1))
    expect(calls).toBe(5)
    expect(warnings).toHaveLength(2)
  }))
