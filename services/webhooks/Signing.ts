/**
 * Webhook secrets and signatures. A secret is shown once, at creation; the
 * store keeps it encrypted (AES-256-GCM under WEBHOOK_SECRET_KEY), so a leak
 * of the database alone does not reveal it. A delivery is signed over the
 * exact bytes sent: `sha256=` and the hex HMAC-SHA256 keyed with the secret.
 */
import { Context, Data, Effect, Layer, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { randomBase62 } from "../secrets/Tokens.ts"

export const newWebhookSecret = () => `whsec_${randomBase62(32)}`

/** The signature header's value for `body` (the bytes sent) under `secret`. */
export const signature = (secret: string, body: string | Uint8Array) =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`

/** A stored secret that does not decrypt: the key changed, or the row was tampered with. */
export class SecretUnreadable extends Data.TaggedError("SecretUnreadable")<{ readonly message: string }> {}

/** Why the secret key cannot be had; start-up reports it and stops. */
export class SecretKeyMissing extends Data.TaggedError("SecretKeyMissing")<{ readonly message: string }> {}

export interface WebhookSecretsShape {
  readonly seal: (secret: string) => string
  readonly open: (sealed: string) => Effect.Effect<string, SecretUnreadable>
}

/** At least this many characters of key material (e.g. `openssl rand -base64 32`). */
export const MIN_KEY_CHARS = 32

export const makeSecrets = (keyMaterial: string): WebhookSecretsShape => {
  const key = createHash("sha256").update(`engram webhook secrets\0${keyMaterial}`).digest()
  const seal = (secret: string) => {
    const iv = randomBytes(12)
    const cipher = createCipheriv("aes-256-gcm", key, iv)
    const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()])
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`
  }
  const open = (sealed: string) =>
    Effect.try({
      try: () => {
        if (!sealed.startsWith("v1.")) throw new Error("unknown format")
        const raw = Buffer.from(sealed.slice(3), "base64url")
        const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12))
        decipher.setAuthTag(raw.subarray(12, 28))
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
      },
      catch: () =>
        new SecretUnreadable({ message: "the webhook's secret does not decrypt with WEBHOOK_SECRET_KEY (was the key changed?)" })
    })
  return { seal, open }
}

const fromConfigured = (value: Redacted.Redacted) => {
  const material = Redacted.value(value).trim()
  return material.length < MIN_KEY_CHARS
    ? Effect.fail(new SecretKeyMissing({ message: `WEBHOOK_SECRET_KEY must have at least ${MIN_KEY_CHARS} characters` }))
    : Effect.succeed(makeSecrets(material))
}

/** The key file the embedded profile keeps under DATA_DIR when no WEBHOOK_SECRET_KEY is set. */
export const KEY_FILE = "webhook-secret.key"

export class WebhookSecrets extends Context.Tag("engram/webhooks/WebhookSecrets")<WebhookSecrets, WebhookSecretsShape>() {
  /** Server profile: WEBHOOK_SECRET_KEY is required (every node must share it). */
  static readonly required = Layer.effect(
    WebhookSecrets,
    Effect.flatMap(AppConfig, (config) =>
      Option.match(config.webhookSecretKey, {
        onNone: () =>
          Effect.fail(new SecretKeyMissing({
            message: "the server profile needs WEBHOOK_SECRET_KEY (at least 32 characters, the same on every node) to encrypt webhook secrets"
          })),
        onSome: fromConfigured
      }))
  )

  /**
   * Embedded profile: WEBHOOK_SECRET_KEY when set; otherwise a key generated
   * once and kept in DATA_DIR (readable by its owner only). An in-memory data
   * directory gets a key for the life of the process.
   */
  static readonly orDataDir = Layer.effect(
    WebhookSecrets,
    Effect.flatMap(AppConfig, (config) =>
      Option.match(config.webhookSecretKey, {
        onSome: fromConfigured,
        onNone: () =>
          config.dataDir.startsWith("memory://")
            ? Effect.succeed(makeSecrets(randomBytes(32).toString("base64")))
            : Effect.try({
              try: () => {
                const dir = resolve(config.dataDir)
                const file = join(dir, KEY_FILE)
                if (!existsSync(file)) {
                  mkdirSync(dir, { recursive: true })
                  writeFileSync(file, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" })
                  chmodSync(file, 0o600)
                }
                return makeSecrets(readFileSync(file, "utf8").trim())
              },
              catch: (error) =>
                new SecretKeyMissing({ message: `cannot keep the webhook secret key under ${config.dataDir}: ${String(error)}` })
            })
      }))
  )
}
