/**
 * Bearer secrets. API keys are `svc_<env>_<id><secret>` and session tokens
 * `ses_<id><secret>`: a 12-character non-secret id that finds the row, then a
 * 32-character secret of which only a SHA-256 digest is stored.
 */
import { createHash, randomFillSync, timingSafeEqual } from "node:crypto"

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
export const ID_LENGTH = 12
export const SECRET_LENGTH = 32

/** Random bytes taken from the system's generator this many at a time: one call serves about a hundred ids, not one. */
const POOL_BYTES = 4096
let pool = Buffer.alloc(0)
let taken = 0

/** The next unused byte of the pool (each is given out once). */
const randomByte = (): number => {
  if (taken >= pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES))
    taken = 0
  }
  return pool[taken++]!
}

/** Uniform random base62 (rejection sampling: no modulo bias). */
export const randomBase62 = (length: number): string => {
  const chars = new Array<string>(length)
  for (let n = 0; n < length;) {
    const byte = randomByte()
    if (byte < 248) chars[n++] = ALPHABET[byte % 62]!
  }
  return chars.join("")
}

export const digest = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex")

export const digestMatches = (secret: string, storedHex: string): boolean => {
  const a = Buffer.from(digest(secret), "hex")
  const b = Buffer.from(storedHex, "hex")
  return a.length === b.length && timingSafeEqual(a, b)
}

export type KeyEnv = "live" | "test"

const API_KEY = /^svc_(live|test)_([A-Za-z0-9]{12})([A-Za-z0-9]{32})$/
const SESSION = /^ses_([A-Za-z0-9]{12})([A-Za-z0-9]{32})$/

export interface IssuedSecret {
  readonly id: string
  readonly raw: string
  readonly hash: string
}

export const issueApiKey = (env: KeyEnv): IssuedSecret & { readonly prefix: string } => {
  const id = randomBase62(ID_LENGTH)
  const raw = `svc_${env}_${id}${randomBase62(SECRET_LENGTH)}`
  return { id: `key_${id}`, raw, hash: digest(raw), prefix: `svc_${env}_${id}` }
}

export const issueSessionToken = (): IssuedSecret => {
  const id = randomBase62(ID_LENGTH)
  const raw = `ses_${id}${randomBase62(SECRET_LENGTH)}`
  return { id: `ses_${id}`, raw, hash: digest(raw) }
}

export type ParsedBearer =
  | { readonly _tag: "ApiKey"; readonly id: string; readonly env: KeyEnv; readonly raw: string }
  | { readonly _tag: "Session"; readonly id: string; readonly raw: string }
  | { readonly _tag: "Malformed" }

/** Tells API keys and session tokens apart by prefix; anything else is malformed. */
export const parseBearer = (token: string): ParsedBearer => {
  const key = API_KEY.exec(token)
  if (key) return { _tag: "ApiKey", id: `key_${key[2]}`, env: key[1] as KeyEnv, raw: token }
  const session = SESSION.exec(token)
  if (session) return { _tag: "Session", id: `ses_${session[1]}`, raw: token }
  return { _tag: "Malformed" }
}
