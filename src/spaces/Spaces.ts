/**
 * Spaces of the caller's organization. A space_id that only another
 * organization holds answers 403 `forbidden`; one nobody holds, 404 `not_found`.
 * Nothing else of another organization's space is ever read.
 */
import { Clock, Effect, Option } from "effect"
import { Forbidden, NotFound, ServiceUnavailable, SpaceLimitReached, SpaceUnavailable } from "../domain/Errors.ts"
import { Metering } from "../metering/Metering.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import type { CreateSpaceRequest, SpaceType } from "../domain/Spaces.ts"
import { SpaceRepo } from "../../services/store/SpaceRepo.ts"
import { SpaceMemberRepo } from "../../services/store/SpaceMemberRepo.ts"
import { SpaceEntity, spaceEntityId } from "../domain/SpaceProtocol.ts"
import { newId } from "../identity/Ids.ts"
import { type SpaceRef, spaceRef } from "../domain/Ids.ts"

/** What a request does to a space it reaches: members with `read` access may only read. */
export type Need = "read" | "write"

export class Spaces extends Effect.Service<Spaces>()("engram/spaces/Spaces", {
  dependencies: [SpaceRepo.Default, SpaceMemberRepo.Default, Metering.Default],
  effect: Effect.gen(function*() {
    const repo = yield* SpaceRepo
    const members = yield* SpaceMemberRepo
    const metering = yield* Metering
    const entity = yield* SpaceEntity.client

    const unreachable = (error: { _tag: string }) =>
      new ServiceUnavailable({ message: `the space is temporarily unavailable (${error._tag}); retry shortly` })

    /** A space the caller's organization does not hold: 403 if another organization holds the id, else 404. */
    const missing = (orgId: string, spaceId: string) =>
      Effect.flatMap(repo.heldElsewhere(orgId, spaceId), (elsewhere): Effect.Effect<never, Forbidden | NotFound> =>
        elsewhere
          ? Effect.fail(new Forbidden({ message: `space ${spaceId} does not belong to your organization` }))
          : Effect.fail(new NotFound({ message: `space ${spaceId} not found` })))

    /** The caller's space, or the documented 403/404. */
    const get = Effect.fn("Spaces.get")(function*(principal: PrincipalShape, spaceId: string) {
      yield* Effect.annotateCurrentSpan({ space_id: spaceId, org_id: principal.orgId })
      const space = yield* repo.find(principal.orgId, spaceId)
      if (Option.isNone(space)) return yield* missing(principal.orgId, spaceId)
      return space.value
    })

    const own = spaceRef

    /**
     * Where a space another organization shares with the caller lives, when
     * it is shared with `need` access and its owner holds an active key.
     * Read from the store every time, so a removed member loses access at
     * once on every node. None when nothing is shared under that id.
     */
    const sharedRef = Effect.fn("Spaces.sharedRef")(function*(principal: PrincipalShape, spaceId: string, need: Need) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const found = yield* members.accessFor(principal.orgId, spaceId, now)
      if (Option.isNone(found)) return Option.none<SpaceRef>()
      yield* Effect.annotateCurrentSpan({ space_id: spaceId, owner_org_id: found.value.org_id, access: found.value.access })
      if (!found.value.owner_has_key) {
        return yield* new SpaceUnavailable({
          message: `space ${spaceId} is shared with your organization, but its owning organization has no active API key; ` +
            "it is available again once the owner creates one"
        })
      }
      if (need === "write" && found.value.access === "read") {
        return yield* new Forbidden({ message: `space ${spaceId} is shared with your organization read-only` })
      }
      return Option.some(spaceRef({ orgId: found.value.org_id }, spaceId))
    })

    /** The caller's own space, else one shared with its organization for `need`; none when neither exists. */
    const reach = (principal: PrincipalShape, spaceId: string, need: Need) =>
      Effect.flatMap(repo.find(principal.orgId, spaceId), (found) =>
        Option.isSome(found) ? Effect.succeed(Option.some(own(principal, spaceId))) : sharedRef(principal, spaceId, need))

    /**
     * The space a memory request reaches: the caller's own, else one shared
     * with its organization (checked for `need`), else the documented 403/404.
     */
    const access = Effect.fn("Spaces.access")(function*(principal: PrincipalShape, spaceId: string, need: Need) {
      const reached = yield* reach(principal, spaceId, need)
      if (Option.isSome(reached)) return reached.value
      return yield* missing(principal.orgId, spaceId)
    })

    /**
     * The space a write reaches: own, shared with write access, or created
     * now as the caller's own when nobody holds the id (see `ensure`).
     */
    const forWrite = Effect.fn("Spaces.forWrite")(function*(principal: PrincipalShape, spaceId: string) {
      const reached = yield* reach(principal, spaceId, "write")
      if (Option.isSome(reached)) return reached.value
      yield* ensure(principal, spaceId)
      return own(principal, spaceId)
    })

    /** GET /v1/spaces/{id}: the caller's space, or one shared with it (marked `shared`). */
    const view = Effect.fn("Spaces.view")(function*(principal: PrincipalShape, spaceId: string) {
      const space = yield* repo.find(principal.orgId, spaceId)
      if (Option.isSome(space)) return space.value
      if (Option.isSome(yield* sharedRef(principal, spaceId, "read"))) {
        const shared = yield* repo.findShared(principal.orgId, spaceId)
        if (Option.isSome(shared)) return shared.value
      }
      return yield* missing(principal.orgId, spaceId)
    })

    /**
     * A new space only while the organization holds fewer than its plan's
     * max_spaces. Creations racing each other can pass it by at most the
     * number in flight.
     */
    const withinPlan = (orgId: string) =>
      Effect.gen(function*() {
        const plan = yield* metering.plan(orgId)
        const held = yield* repo.count(orgId)
        if (held < plan.max_spaces) return
        return yield* new SpaceLimitReached({
          message: `this organization holds ${held} spaces, the most its ${plan.name} plan allows (${plan.max_spaces}); ` +
            "delete one, or move to a larger plan"
        })
      })

    const create = Effect.fn("Spaces.create")(function*(principal: PrincipalShape, request: CreateSpaceRequest) {
      const spaceId = request.space_id ?? newId("sp")
      yield* Effect.annotateCurrentSpan({ space_id: spaceId, org_id: principal.orgId })
      yield* withinPlan(principal.orgId)
      return yield* repo.create(principal.orgId, {
        spaceId,
        name: request.name?.trim() ?? spaceId,
        spaceType: request.space_type ?? "general",
        description: request.description ?? "",
        projectId: request.project_id,
        now: new Date(yield* Clock.currentTimeMillis)
      })
    })

    /**
     * Writes create their space on first use, unless another organization holds
     * that id. An implicit space (the proxy's `default`) is every organization's own.
     */
    const ensure = Effect.fn("Spaces.ensure")(function*(principal: PrincipalShape, spaceId: string, implicit = false) {
      if (Option.isSome(yield* repo.find(principal.orgId, spaceId))) return
      if (!implicit && (yield* repo.heldElsewhere(principal.orgId, spaceId))) {
        return yield* new Forbidden({ message: `space ${spaceId} does not belong to your organization` })
      }
      yield* withinPlan(principal.orgId)
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* repo.create(principal.orgId, { spaceId, name: spaceId, spaceType: "general", description: "", now }).pipe(
        Effect.catchTag("Conflict", () => Effect.void)
      )
    })

    /**
     * Deleting a space is a change to the space, so its entity makes it (one
     * write path): rows and index go together, and a space deleted through
     * any node is gone for every node at once.
     */
    const remove = Effect.fn("Spaces.delete")(function*(principal: PrincipalShape, spaceId: string) {
      yield* Effect.annotateCurrentSpan({ space_id: spaceId, org_id: principal.orgId })
      const ref = spaceRef(principal, spaceId)
      const deleted = yield* entity(spaceEntityId(ref)).Delete().pipe(
        Effect.catchTags({ MailboxFull: unreachable, AlreadyProcessingMessage: unreachable, PersistenceError: unreachable })
      )
      if (!deleted) return yield* missing(principal.orgId, spaceId)
    })

    return {
      get,
      access,
      forWrite,
      view,
      missing,
      ensure,
      create,
      delete: remove,
      list: (
        principal: PrincipalShape,
        query: { limit: number; offset: number; space_type?: SpaceType | undefined; project_id?: string | undefined }
      ) =>
        Effect.map(
          repo.list(principal.orgId, {
            limit: query.limit,
            offset: query.offset,
            spaceType: query.space_type,
            projectId: query.project_id
          }),
          (result) => ({ ...result, limit: query.limit, offset: query.offset })
        )
    }
  })
}) {}
