import { Schema } from "effect"
import { SafeString } from "./SafeText.ts"

/** Request bodies reject unknown fields (422 `validation_error`) instead of dropping them. */
export const strict = <S extends Schema.Schema.Any>(schema: S): S =>
  schema.annotations({ parseOptions: { onExcessProperty: "error" } }) as S

/** A bounded, non-blank string under the safe-text rule. */
export const Text = (max: number) =>
  SafeString.pipe(Schema.filter((s) => s.trim().length > 0, { message: () => "must not be blank" }), Schema.maxLength(max))

/** `limit` / `offset` query parameters. */
export const Page = (defaultLimit: number, maxLimit: number) =>
  Schema.Struct({
    limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, maxLimit)), {
      default: () => defaultLimit
    }),
    offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(0)), {
      default: () => 0
    })
  })

/** A page of a list: `{items, total, limit, offset}`, the shape every list endpoint answers. */
export const Paged = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({ items: Schema.Array(item), total: Schema.Number, limit: Schema.Number, offset: Schema.Number })
