/**
 * Memory injection figures: each context block rendered into a prompt
 * (retrieve with format `block`, and so the proxy and MCP) counts its size
 * and how much of it repeats the start of the previous block in the same
 * scope (space, user, agent, session) within the last few minutes: the part
 * a provider's prompt cache could reuse. Both are length/4 estimates; the
 * second measures eligibility for caching, not a saving. `block_order`
 * `stable` keeps a block's lines in the order the memories were stored, so
 * consecutive blocks share longer starts.
 */
import { Clock, Duration, Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { Cache, cacheDown } from "../../services/cache/Cache.ts"
import { estimateTokens } from "../../services/llm/Provider.ts"
import { InjectionRepo } from "../../services/store/InjectionRepo.ts"

/** How long a block stays the one the next is compared with (about a provider's prompt-cache lifetime). */
export const PREFIX_WINDOW = Duration.minutes(10)

export interface InjectionScope {
  readonly orgId: string
  readonly spaceId: string
  readonly userId: string | null
  readonly agentId: string | null
  readonly sessionId: string | null
}

/** Characters two texts share from their start. */
export const sharedPrefix = (a: string, b: string) => {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

export class Injections extends Effect.Service<Injections>()("engram/metering/Injections", {
  dependencies: [InjectionRepo.Default],
  effect: Effect.gen(function*() {
    const cache = yield* Cache
    const repo = yield* InjectionRepo

    const keyOf = (scope: InjectionScope) =>
      "inj:" + createHash("sha256")
        .update(JSON.stringify([scope.orgId, scope.spaceId, scope.userId, scope.agentId, scope.sessionId]))
        .digest("base64url")

    /** Counts one block; its cache-eligible start is what it shares with the scope's previous block. */
    const record = (scope: InjectionScope, block: string) =>
      Effect.gen(function*() {
        if (block === "") return
        const key = keyOf(scope)
        const previous = yield* cache.get(key).pipe(Effect.mapError(cacheDown))
        yield* cache.set(key, block, PREFIX_WINDOW).pipe(Effect.mapError(cacheDown))
        const shared = Option.match(previous, { onNone: () => 0, onSome: (text) => sharedPrefix(text, block) })
        yield* repo.add({
          orgId: scope.orgId,
          spaceId: scope.spaceId,
          at: new Date(yield* Clock.currentTimeMillis),
          blockTokens: estimateTokens(block),
          cachePrefixTokens: Math.floor(shared / 4)
        })
      }).pipe(Effect.withSpan("Injections.record"))

    return { record }
  })
}) {}
