/**
 * Sharing a space with other organizations. Anyone signed in to the owning
 * organization sees who shares it; its owners and admins add and remove
 * members. A member organization's keys then reach the space through the
 * memory endpoints (see Spaces.access), read-only or read and write.
 */
import { Clock, Effect, Option } from "effect"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import { spaceRef } from "../domain/Ids.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import type { AddSpaceMemberRequest, SpaceMember } from "../domain/SpaceMembersApi.ts"
import { AccountRepo } from "../../services/store/AccountRepo.ts"
import { type MemberRow, SpaceMemberRepo } from "../../services/store/SpaceMemberRepo.ts"
import { Spaces } from "./Spaces.ts"

const toMember = (row: MemberRow): SpaceMember => ({
  org_id: row.member_org_id,
  name: row.name,
  role: "member",
  access: row.access,
  added_at: row.added_at.toISOString()
})

export class SpaceMembers extends Effect.Service<SpaceMembers>()("engram/spaces/SpaceMembers", {
  dependencies: [Spaces.Default, SpaceMemberRepo.Default, AccountRepo.Default],
  effect: Effect.gen(function*() {
    const spaces = yield* Spaces
    const repo = yield* SpaceMemberRepo
    const accounts = yield* AccountRepo

    /** The caller's own space (a member organization cannot manage the sharing). */
    const owned = (principal: PrincipalShape, spaceId: string) =>
      Effect.map(spaces.get(principal, spaceId), (space) => ({
        space,
        ref: spaceRef(principal, spaceId)
      }))

    return {
      list: Effect.fn("SpaceMembers.list")(function*(principal: PrincipalShape, spaceId: string) {
        const { ref, space } = yield* owned(principal, spaceId)
        const owner = yield* accounts.organization(principal.orgId)
        const items: Array<SpaceMember> = [
          {
            org_id: principal.orgId,
            name: Option.match(owner, { onNone: () => principal.orgId, onSome: (o) => o.name }),
            role: "owner",
            access: "write",
            added_at: space.created_at
          },
          ...(yield* repo.list(ref)).map(toMember)
        ]
        return { items, total: items.length }
      }),

      add: Effect.fn("SpaceMembers.add")(function*(principal: PrincipalShape, spaceId: string, request: AddSpaceMemberRequest) {
        const { ref } = yield* owned(principal, spaceId)
        yield* Effect.annotateCurrentSpan({ space_id: spaceId, member_org_id: request.org_id, access: request.access })
        if (request.org_id === principal.orgId) {
          return yield* new ValidationError({ message: "org_id is the organization that owns the space; name another organization" })
        }
        if (Option.isNone(yield* accounts.organization(request.org_id))) {
          return yield* new NotFound({ message: `organization ${request.org_id} not found` })
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        return toMember(yield* repo.put(ref, request.org_id, request.access, now))
      }),

      remove: Effect.fn("SpaceMembers.remove")(function*(principal: PrincipalShape, spaceId: string, memberOrgId: string) {
        const { ref } = yield* owned(principal, spaceId)
        yield* Effect.annotateCurrentSpan({ space_id: spaceId, member_org_id: memberOrgId })
        if (!(yield* repo.remove(ref, memberOrgId))) {
          return yield* new NotFound({ message: `space ${spaceId} is not shared with organization ${memberOrgId}` })
        }
      })
    }
  })
}) {}
