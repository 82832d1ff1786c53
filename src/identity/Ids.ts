import { randomBase62 } from "../../services/secrets/Tokens.ts"

/** Opaque resource ids: a readable type prefix and 16 random base62 characters. */
export const newId = (prefix: "org" | "usr" | "sp" | "fb" | "prj" | "rul" | "inv") => `${prefix}_${randomBase62(16)}`
