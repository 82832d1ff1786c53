/**
 * `engram export --space <id> > file` and `engram import --space <id> < file`
 * for an operator, on the configured store, never as a cluster runner.
 * - export reads the store a page at a time and writes the file to stdout
 *   (with the server stopped on the embedded store, or beside running
 *   servers on PostgreSQL).
 * - import stores the file as an import job of the space, as the HTTP route
 *   does. On the embedded store (which this process has locked, so no server
 *   holds the space's index) it runs the job itself; on PostgreSQL a running
 *   server's waker finds the queued job at its next round (every 5 s) and the
 *   space's entity runs it (its index then reloads), while this command
 *   waits for the outcome.
 */
import { Options } from "@effect/cli"
import * as Command from "@effect/cli/Command"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Chunk, Console, Duration, Effect, Layer, Option, Stream } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { OrgId, SpaceId, type SpaceRef } from "../domain/Ids.ts"
import { exportLines } from "../portability/Exporter.ts"
import { makeImporter } from "../portability/Importer.ts"
import { storeImport } from "../portability/Upload.ts"
import { containDefects } from "../space/SpaceWriter.ts"
import { StoreAndEmbedder } from "../../layers/Main.ts"
import { QuietLogging } from "../../layers/Observability.ts"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { ExportRepo } from "../../services/store/ExportRepo.ts"
import { ImportRepo } from "../../services/store/ImportRepo.ts"
import { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { type PortabilityJob, PortabilityRepo } from "../../services/store/PortabilityRepo.ts"
import { RuleRepo } from "../../services/store/RuleRepo.ts"
import { WebhookRepo } from "../../services/store/WebhookRepo.ts"

type Needs = PortabilityRepo | ExportRepo | ImportRepo | RuleRepo | WebhookRepo | LedgerRepo | Embedder | AppConfig

/** The store and the embedder, with the repositories an export or import reads and writes; logs on stderr. */
const onStore = <A, E>(effect: Effect.Effect<A, E, Needs>) =>
  effect.pipe(
    Effect.provide(
      Layer.mergeAll(
        PortabilityRepo.Default,
        ExportRepo.Default,
        ImportRepo.Default,
        RuleRepo.Default,
        WebhookRepo.Default,
        LedgerRepo.Default
      ).pipe(Layer.provideMerge(StoreAndEmbedder))
    ),
    Effect.provide(QuietLogging)
  )

const spaceOption = Options.text("space").pipe(Options.withDescription("space id"))
const orgOption = Options.text("org").pipe(
  Options.withDescription("organization name or id (needed only when several organizations hold a space with this id)"),
  Options.optional
)

/** The space named by its id, in the organization `--org` names (by id or name) or the only one holding it. */
const resolveSpace = (spaceId: string, org: Option.Option<string>) =>
  Effect.gen(function*() {
    const holders = yield* (yield* PortabilityRepo).holders(spaceId)
    const matching = Option.match(org, {
      onNone: () => holders,
      onSome: (wanted) => holders.filter((h) => h.org_id === wanted || h.name === wanted)
    })
    const [only, ...others] = matching
    if (only === undefined) {
      return yield* Effect.fail(Option.match(org, {
        onNone: () => `no space ${spaceId} on this store`,
        onSome: (wanted) => `no space ${spaceId} in an organization named or with the id ${wanted}`
      }))
    }
    if (others.length > 0) {
      const named = matching.map((h) => `${h.org_id} (${h.name})`).join(", ")
      return yield* Effect.fail(`space ${spaceId} is held by several organizations: ${named}; name one with --org <id>`)
    }
    return { orgId: OrgId.make(only.org_id), spaceId: SpaceId.make(spaceId) } satisfies SpaceRef
  })

/** Writes to stdout, waiting while its buffer is full. */
const writeOut = (text: string) =>
  Effect.async<void>((resume) => {
    if (process.stdout.write(text)) resume(Effect.void)
    else process.stdout.once("drain", () => resume(Effect.void))
  })

const exportCommand = Command.make("export", { space: spaceOption, org: orgOption }, (args) =>
  onStore(Effect.gen(function*() {
    const space = yield* resolveSpace(args.space, args.org)
    const embedder = yield* Embedder
    yield* exportLines(yield* ExportRepo, space, embedder).pipe(
      Stream.grouped(100),
      Stream.runForEach((lines) => writeOut(Chunk.join(lines, "")))
    )
  }))).pipe(Command.withDescription("Write a space's export file (NDJSON) to stdout"))

const summary = (space: SpaceRef, job: PortabilityJob) => ({
  job_id: job.jobId,
  space_id: space.spaceId,
  status: job.status,
  item_count: job.progress?.item_count ?? 0,
  reembedded: job.progress?.reembedded ?? 0,
  redacted: job.progress?.redacted ?? 0,
  error: job.error
})

/** Polls the job until it is done; says once on stderr when nothing has picked it up for a while. */
const awaitJob = (space: SpaceRef, jobId: string) =>
  Effect.gen(function*() {
    const jobs = yield* PortabilityRepo
    const { wakeInterval } = yield* AppConfig
    const patience = Duration.toMillis(wakeInterval) * 3 + 5_000
    let waited = 0
    let told = false
    while (true) {
      const job = yield* jobs.find(space, "import", jobId)
      if (Option.isNone(job)) return yield* Effect.fail(`import job ${jobId} is gone (was the space deleted?)`)
      if (job.value.status === "completed" || job.value.status === "failed" || job.value.status === "cancelled") return job.value
      if (job.value.status === "queued" && waited > patience && !told) {
        told = true
        yield* Console.error(
          `import job ${jobId} is queued; no server has picked it up yet. A running server's waker finds it within ` +
            `seconds; stopping this command leaves it queued for the next server to start.`
        )
      }
      yield* Effect.sleep(Duration.millis(500))
      waited += 500
    }
  })

const importCommand = Command.make("import", {
  space: spaceOption,
  org: orgOption,
  noWait: Options.boolean("no-wait").pipe(Options.withDescription("on PostgreSQL: print the queued job and leave it to the servers"))
}, (args) =>
  onStore(Effect.gen(function*() {
    const space = yield* resolveSpace(args.space, args.org)
    const jobs = yield* PortabilityRepo
    const contents = yield* jobs.contents(space)
    if (contents.memories + contents.documents + contents.models > 0) {
      return yield* Effect.fail(
        `space ${space.spaceId} is not empty (${contents.memories} memories, ${contents.documents} documents, ` +
          `${contents.models} memory models): an import restores into an empty space`
      )
    }
    if (yield* jobs.importPending(space)) return yield* Effect.fail(`an import into space ${space.spaceId} is already queued or running`)
    const stdin = NodeStream.fromReadable<string>(() => process.stdin, (error) => `cannot read stdin: ${String(error)}`)
    const stored = yield* storeImport(jobs, space, stdin, {
      maxBytes: Number.POSITIVE_INFINITY,
      tooLarge: () => "too large",
      empty: () => "stdin is empty: pipe an export file in (engram import --space <id> < file)"
    })

    const embedded = Option.isNone((yield* AppConfig).databaseUrl)
    if (!embedded && args.noWait) {
      const queued = yield* jobs.find(space, "import", stored.jobId)
      return yield* Console.log(JSON.stringify(Option.match(queued, { onNone: () => ({ job_id: stored.jobId }), onSome: (j) => summary(space, j) })))
    }
    if (embedded) {
      // This process holds the embedded store's lock: no server, and so no entity, holds the space's index.
      const job = yield* jobs.find(space, "import", stored.jobId)
      if (Option.isSome(job)) {
        const importer = makeImporter({
          space,
          jobs,
          store: yield* ImportRepo,
          rules: yield* RuleRepo,
          webhooks: yield* WebhookRepo,
          ledger: yield* LedgerRepo,
          embedder: yield* Embedder,
          alone: containDefects("an import", space),
          afterCommit: Effect.void
        })
        yield* importer.run(job.value)
      }
    }
    const done = yield* awaitJob(space, stored.jobId)
    yield* Console.log(JSON.stringify(summary(space, done)))
    if (done.status !== "completed") return yield* Effect.fail(`the import ${done.status}: ${done.error ?? "cancelled"}`)
  }))).pipe(Command.withDescription("Import an export file from stdin into an empty space"))

export const portabilityCommands = [exportCommand, importCommand] as const
