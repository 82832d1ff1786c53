/**
 * What the credential may reach: an OAuth grant names its spaces (null:
 * all) and may be read-only. API keys and sessions are unlimited.
 */
export interface ToolLimits {
  readonly spaces: ReadonlyArray<string> | null
  readonly canWrite: boolean
}

export const UNLIMITED: ToolLimits = { spaces: null, canWrite: true }
