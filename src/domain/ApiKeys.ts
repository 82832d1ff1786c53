/** API key records exactly as the spec lists them; the secret only on create. */
import { Schema } from "effect"
import { strict, Text } from "./Strict.ts"

export const KeyEnv = Schema.Literal("live", "test")
export type KeyEnv = typeof KeyEnv.Type

export const ApiKey = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key_prefix: Schema.String,
  env: KeyEnv,
  created_at: Schema.String,
  expires_at: Schema.NullOr(Schema.String),
  status: Schema.Literal("active", "expired"),
  last_used_at: Schema.NullOr(Schema.String)
})
export type ApiKey = typeof ApiKey.Type

export const CreatedApiKey = Schema.Struct({ ...ApiKey.fields, raw_key: Schema.String })
export type CreatedApiKey = typeof CreatedApiKey.Type

export const CreateApiKeyRequest = strict(Schema.Struct({
  name: Text(200),
  env: KeyEnv,
  expires_in_days: Schema.optional(Schema.Int.pipe(Schema.between(1, 3650)))
}))
export type CreateApiKeyRequest = typeof CreateApiKeyRequest.Type
