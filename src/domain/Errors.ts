/**
 * Domain errors. Each carries its HTTP status and the documented wire code;
 * `http/ErrorEnvelope.ts` renders every failure as
 * `{"error":{"code","message","request_id"}}`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

const fields = <const Code extends string>(code: Code) => ({
  code: Schema.Literal(code).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => code)),
  message: Schema.String
})

export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  fields("bad_request"),
  HttpApiSchema.annotations({ status: 400 })
) {}

export class ValidationError extends Schema.TaggedError<ValidationError>()(
  "ValidationError",
  fields("validation_error"),
  HttpApiSchema.annotations({ status: 422 })
) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  fields("unauthorized"),
  HttpApiSchema.annotations({ status: 401 })
) {}

export class KeyExpired extends Schema.TaggedError<KeyExpired>()(
  "KeyExpired",
  fields("key_expired"),
  HttpApiSchema.annotations({ status: 401 })
) {}

export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()(
  "InvalidApiKey",
  fields("invalid_api_key"),
  HttpApiSchema.annotations({ status: 401 })
) {}

export class SessionRequired extends Schema.TaggedError<SessionRequired>()(
  "SessionRequired",
  fields("session_required"),
  HttpApiSchema.annotations({ status: 401 })
) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  fields("forbidden"),
  HttpApiSchema.annotations({ status: 403 })
) {}

export class InsufficientRole extends Schema.TaggedError<InsufficientRole>()(
  "InsufficientRole",
  fields("insufficient_role"),
  HttpApiSchema.annotations({ status: 403 })
) {}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  fields("not_found"),
  HttpApiSchema.annotations({ status: 404 })
) {}

/** A unique name (email, space id) is already taken. */
export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  fields("conflict"),
  HttpApiSchema.annotations({ status: 409 })
) {}

/** A configured dependency (store, cache) is down: loud, never a fallback. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  fields("service_unavailable"),
  HttpApiSchema.annotations({ status: 503 })
) {}

/** The failures any authenticated endpoint can answer with. */
export const AuthFailures = [Unauthorized, KeyExpired, InvalidApiKey, ServiceUnavailable] as const
