/** The operator CLI: `engram serve | bootstrap | keys create|list|revoke | reembed | feedback list | export | import`. */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { KeyEnv } from "../domain/ApiKeys.ts"
import { Accounts } from "../identity/Accounts.ts"
import { ApiKeys } from "../identity/ApiKeys.ts"
import { Serve, StoreAndCache, StoreAndEmbedder } from "../../layers/Main.ts"
import { QuietLogging } from "../../layers/Observability.ts"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { FeedbackRepo, FeedbackRow } from "../../services/store/FeedbackRepo.ts"
import { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import { OrgId, SpaceId } from "../domain/Ids.ts"
import { portabilityCommands } from "./PortabilityCommands.ts"

const printJson = (value: unknown) => Console.log(JSON.stringify(value))

/**
 * Store-only commands: no HTTP, no cluster (a CLI must never join it as a
 * runner), no models unless the command needs them; logs on stderr so
 * stdout is just the answer.
 */
const onStore = <A, E>(effect: Effect.Effect<A, E, Accounts | ApiKeys | FeedbackRepo>) =>
  effect.pipe(
    Effect.provide(
      Layer.mergeAll(Accounts.Default, ApiKeys.Default, FeedbackRepo.Default).pipe(Layer.provideMerge(StoreAndCache))
    ),
    Effect.provide(QuietLogging)
  )

const withEmbedder = <A, E>(effect: Effect.Effect<A, E, Accounts | Embedder | MemoryRepo>) =>
  effect.pipe(
    Effect.provide(Layer.mergeAll(Accounts.Default, MemoryRepo.Default).pipe(Layer.provideMerge(StoreAndEmbedder))),
    Effect.provide(QuietLogging)
  )

const serve = Command.make("serve", {}, () => Layer.launch(Serve)).pipe(
  Command.withDescription("Run the HTTP service (embedded store unless DATABASE_URL is set)")
)

const org = Options.text("org").pipe(Options.withDescription("organization name"))
const email = Options.text("email")
const password = Options.text("password").pipe(Options.optional)

const bootstrap = Command.make("bootstrap", { org, email, password }, (args) =>
  onStore(Effect.gen(function*() {
    const accounts = yield* Accounts
    const apiKeys = yield* ApiKeys
    const session = yield* accounts.bootstrap({
      orgName: args.org,
      email: args.email.trim().toLowerCase(),
      password: Option.getOrUndefined(args.password)
    })
    const principal = yield* accounts.operator(session.org_id)
    const key = yield* apiKeys.create(principal, { name: "bootstrap", env: "test" })
    yield* printJson({ org_id: session.org_id, user_id: session.user_id, session_token: session.session_token, api_key: key.raw_key })
  }))).pipe(Command.withDescription("Create an organization, its owner and one test API key; prints one JSON line"))

const orgId = Options.text("org").pipe(Options.withDescription("organization id (org_...)"))

const keysCreate = Command.make("create", {
  orgId,
  name: Options.text("name"),
  env: Options.choice("env", KeyEnv.literals).pipe(Options.withDefault("test" as const)),
  expiresInDays: Options.integer("expires-in-days").pipe(Options.optional)
}, (args) =>
  onStore(Effect.gen(function*() {
    const principal = yield* (yield* Accounts).operator(args.orgId)
    const days = Option.getOrUndefined(args.expiresInDays)
    if (days !== undefined && (days < 1 || days > 3650)) return yield* Effect.fail("--expires-in-days must be 1 to 3650")
    const key = yield* (yield* ApiKeys).create(principal, {
      name: args.name,
      env: args.env,
      ...(days === undefined ? {} : { expires_in_days: days })
    })
    yield* printJson(key)
  })))

const keysList = Command.make("list", { orgId }, (args) =>
  onStore(Effect.gen(function*() {
    const principal = yield* (yield* Accounts).operator(args.orgId)
    yield* printJson(yield* (yield* ApiKeys).list(principal.orgId))
  })))

const keysRevoke = Command.make("revoke", { orgId, keyId: Args.text({ name: "key-id" }) }, (args) =>
  onStore(Effect.gen(function*() {
    const principal = yield* (yield* Accounts).operator(args.orgId)
    yield* (yield* ApiKeys).revoke(principal.orgId, args.keyId)
    yield* printJson({ id: args.keyId, revoked: true })
  })))

const reembed = Command.make("reembed", { orgId, spaceId: Options.text("space") }, (args) =>
  withEmbedder(Effect.gen(function*() {
    yield* (yield* Accounts).operator(args.orgId)
    const embedder = yield* Embedder
    const repo = yield* MemoryRepo
    const space = { orgId: OrgId.make(args.orgId), spaceId: SpaceId.make(args.spaceId) }
    const stale = yield* repo.staleEmbeddings(space, embedder.id)
    for (let i = 0; i < stale.length; i += 256) {
      const batch = stale.slice(i, i + 256)
      const vectors = yield* embedder.embed(batch.map((m) => m.text))
      yield* repo.setEmbeddings(space, embedder.id, batch.map((m, j) => [m.id, vectors[j]!] as const))
    }
    yield* printJson({ space_id: args.spaceId, embedder: embedder.id, reembedded: stale.length })
  }))).pipe(Command.withDescription("Re-embed a space's memories with the configured embedder (after changing it)"))

const keys = Command.make("keys").pipe(
  Command.withSubcommands([keysCreate, keysList, keysRevoke]),
  Command.withDescription("Manage an organization's API keys on the configured store")
)

/**
 * Members' text shown on a terminal: control characters (C0, DEL, C1), line
 * separators and bidi overrides become `\uXXXX`, so no message can move the
 * cursor, recolour the screen or fake another line.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
const visible = (text: string) => text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

const feedbackBlock = (row: FeedbackRow) => {
  const org = row.org_name === null ? row.org_id : `${visible(row.org_name)} (${row.org_id})`
  const sender = row.email ?? (row.user_id === null ? "an API key" : `user ${row.user_id}`)
  const page = row.page === null ? [] : [visible(row.page)]
  return [
    [row.created_at.toISOString(), row.category, org, visible(sender), ...page].join("  "),
    `  ${visible(JSON.stringify(row.message))}`
  ].join("\n")
}

const feedbackList = Command.make("list", {
  limit: Options.integer("limit").pipe(Options.withDefault(50), Options.withDescription("at most this many, 1 to 1000")),
  category: Options.choice("category", FeedbackRow.fields.category.literals).pipe(Options.optional),
  json: Options.boolean("json").pipe(Options.withDescription("print a JSON array of the rows"))
}, (args) =>
  Effect.gen(function*() {
    if (args.limit < 1 || args.limit > 1000) return yield* Effect.fail("--limit must be 1 to 1000")
    const category = Option.getOrUndefined(args.category)
    const rows = yield* onStore(Effect.flatMap(FeedbackRepo, (repo) => repo.list(args.limit, category)))
    if (args.json) return yield* printJson(rows)
    if (rows.length === 0) return yield* Console.log(category === undefined ? "no feedback" : `no feedback in category ${category}`)
    yield* Console.log(rows.map(feedbackBlock).join("\n\n"))
  })).pipe(Command.withDescription("Print the feedback members sent, newest first"))

const feedback = Command.make("feedback").pipe(
  Command.withSubcommands([feedbackList]),
  Command.withDescription("Read the feedback members sent through POST /v1/feedback")
)

export const cli = Command.make("engram").pipe(
  Command.withSubcommands([serve, bootstrap, keys, reembed, feedback, ...portabilityCommands]),
  Command.run({ name: "engram", version: "0.1.0" })
)

export const CliConfig = AppConfig.layer
