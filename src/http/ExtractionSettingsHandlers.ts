import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { requireSession } from "../domain/Principal.ts"
import { ExtractionSettings } from "../ingestion/ExtractionSettings.ts"

/** Free; the control plane's, as the space's rules are: reading takes a session of any member, changing one of an owner or admin. */
export const ExtractionSettingsHandlers = HttpApiBuilder.group(EngramApi, "extractionSettings", (handlers) =>
  Effect.map(ExtractionSettings, (settings) =>
    handlers
      .handle("get", ({ path }) => Effect.flatMap(requireSession, (p) => settings.get(p, path.space_id)))
      .handle("put", ({ path, payload }) => Effect.flatMap(requireSession, (p) => settings.put(p, path.space_id, payload)))
      .handle("reset", ({ path }) => Effect.flatMap(requireSession, (p) => settings.reset(p, path.space_id))))).pipe(
  // The entity reads the same settings; the service is one per node by reference.
  Layer.provide(ExtractionSettings.Default)
)
