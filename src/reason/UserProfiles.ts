/**
 * User profiles: what a space holds about one user_id (only memories written
 * under it), as a page or a numbered block, and asking the space about that
 * user. An unknown user is an empty profile; an unknown space, `space_not_found`.
 */
import { Effect, Option } from "effect"
import { profileMemory } from "../domain/MemoryViews.ts"
import { SpaceNotFound, ValidationError } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import type { AskRequest, AskResponse, UserProfile, UserProfileQuery } from "../domain/Profiles.ts"
import { renderBlock } from "../space/MemoryService.ts"
import { spaceRef } from "../domain/Ids.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { UserMemoryRepo } from "../../services/store/UserMemoryRepo.ts"
import { Metering } from "../metering/Metering.ts"
import { Reason } from "./Reason.ts"

export class UserProfiles extends Effect.Service<UserProfiles>()("engram/reason/UserProfiles", {
  dependencies: [Spaces.Default, UserMemoryRepo.Default, Reason.Default, Metering.Default],
  effect: Effect.gen(function*() {
    const metering = yield* Metering
    const spaces = yield* Spaces
    const repo = yield* UserMemoryRepo
    const reasoning = yield* Reason

    /** The caller's space; an unknown one is `space_not_found` here (another organization's stays 403). */
    const space = (principal: PrincipalShape, spaceId: string) =>
      spaces.get(principal, spaceId).pipe(
        Effect.catchTag("NotFound", () => Effect.fail(new SpaceNotFound({ message: `space ${spaceId} not found` })))
      )

    const get = Effect.fn("UserProfiles.get")(function*(
      principal: PrincipalShape,
      spaceId: string,
      userId: string,
      query: UserProfileQuery
    ) {
      const block = query.format === "block"
      if (query.context_max_tokens !== undefined && !block) {
        return yield* new ValidationError({ message: "context_max_tokens: only with format=block" })
      }
      yield* space(principal, spaceId)
      yield* metering.charge(principal.orgId, "user_profile", { spaceId })
      yield* Effect.annotateCurrentSpan({ space_id: spaceId, user_id: userId })
      const ref = spaceRef(principal, spaceId)
      const span = yield* repo.span(ref, userId)
      const found = yield* repo.page(ref, userId, query.memory_type ?? "collapsed", query)
      const page = { total: found.total, items: found.items.map(profileMemory) }
      const base = {
        space_id: spaceId,
        user_id: userId,
        memory_count: page.total,
        first_seen: span.firstSeen,
        last_active: span.lastActive
      }
      if (!block) return { ...base, memories: page.items, context: null, token_estimate: null } satisfies UserProfile
      const rendered = yield* renderBlock(page.items.map((m) => ({ memory_id: m.id, content: m.text, metadata: m.metadata, memory: m })), query.context_max_tokens)
      return {
        ...base,
        memories: rendered.kept.map((k) => k.memory),
        context: rendered.context,
        token_estimate: rendered.tokens
      } satisfies UserProfile
    })

    const ask = Effect.fn("UserProfiles.ask")(function*(principal: PrincipalShape, spaceId: string, userId: string, body: AskRequest) {
      const found = yield* space(principal, spaceId)
      const answered = yield* reasoning.ask(principal, found, { ...body, userId }).pipe(
        Effect.catchTag("NotFound", () => Effect.fail(new SpaceNotFound({ message: `space ${spaceId} not found` })))
      )
      return {
        space_id: spaceId,
        user_id: userId,
        insights: Option.match(answered, { onNone: () => null, onSome: (a) => a.insights }),
        usage: Option.match(answered, { onNone: () => null, onSome: (a) => a.usage })
      } satisfies AskResponse
    })

    return { get, ask }
  })
}) {}
