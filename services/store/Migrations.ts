/** Numbered migrations, run at start-up; the migrator locks its table so nodes starting together take turns. */
import { Migrator } from "@effect/sql"
import { Effect, Layer } from "effect"
import m0001 from "./migrations/0001_foundation.ts"
import m0002 from "./migrations/0002_memories.ts"
import m0003 from "./migrations/0003_space_settings.ts"
import m0004 from "./migrations/0004_consolidation.ts"
import m0005 from "./migrations/0005_memory_models.ts"
import m0006 from "./migrations/0006_webhooks.ts"
import m0007 from "./migrations/0007_documents_graph.ts"
import m0008 from "./migrations/0008_metering.ts"
import m0009 from "./migrations/0009_billing.ts"
import m0010 from "./migrations/0010_injections.ts"
import m0011 from "./migrations/0011_ledger_debit.ts"
import m0012 from "./migrations/0012_control_plane.ts"
import m0013 from "./migrations/0013_portability.ts"
import m0014 from "./migrations/0014_oauth.ts"
import m0015 from "./migrations/0015_index_snapshots.ts"
import m0016 from "./migrations/0016_compact_storage.ts"
import m0017 from "./migrations/0017_entities_text.ts"
import m0018 from "./migrations/0018_question_state.ts"
import m0019 from "./migrations/0019_job_trace.ts"
import m0020 from "./migrations/0020_flag_rules.ts"
import m0021 from "./migrations/0021_erasures.ts"
import m0022 from "./migrations/0022_owner_invitations.ts"

const run = Migrator.make({})

/** Every migration, by name, in order. */
const MIGRATIONS = {
  "0001_foundation": m0001,
  "0002_memories": m0002,
  "0003_space_settings": m0003,
  "0004_consolidation": m0004,
  "0005_memory_models": m0005,
  "0006_webhooks": m0006,
  "0007_documents_graph": m0007,
  "0008_metering": m0008,
  "0009_billing": m0009,
  "0010_injections": m0010,
  "0011_ledger_debit": m0011,
  "0012_control_plane": m0012,
  "0013_portability": m0013,
  "0014_oauth": m0014,
  "0015_index_snapshots": m0015,
  "0016_compact_storage": m0016,
  "0017_entities_text": m0017,
  "0018_question_state": m0018,
  "0019_job_trace": m0019,
  "0020_flag_rules": m0020,
  "0021_erasures": m0021,
  "0022_owner_invitations": m0022
}

/** The names of every migration, in order (a prepared data directory records which it ran). */
export const MIGRATION_NAMES = Object.keys(MIGRATIONS)

export const migrate = run({
  loader: Migrator.fromRecord(MIGRATIONS),
  table: "engram_migrations"
}).pipe(Effect.withSpan("Migrations.migrate"))

export const layer = Layer.effectDiscard(migrate)
