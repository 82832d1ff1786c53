/**
 * Branded ids of the domain model. They are made where a value enters the
 * system (a decoded row, an authenticated principal, a validated request), so
 * an organization id cannot be passed where a memory id is expected.
 */
import { Schema } from "effect"

export const OrgId = Schema.String.pipe(Schema.brand("OrgId"))
export type OrgId = typeof OrgId.Type

export const SpaceId = Schema.String.pipe(Schema.brand("SpaceId"))
export type SpaceId = typeof SpaceId.Type

export const MemoryId = Schema.String.pipe(Schema.brand("MemoryId"))
export type MemoryId = typeof MemoryId.Type

/** Where a space lives in the cluster: its organization and its id. */
export interface SpaceRef {
  readonly orgId: OrgId
  readonly spaceId: SpaceId
}

/** The space `spaceId` of the organization a caller acts for (a principal, or anything with its org id). */
export const spaceRef = (caller: { readonly orgId: string }, spaceId: string): SpaceRef => ({
  orgId: OrgId.make(caller.orgId),
  spaceId: SpaceId.make(spaceId)
})
