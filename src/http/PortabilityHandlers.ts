import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal } from "../domain/Principal.ts"
import { Portability } from "../portability/Portability.ts"

export const PortabilityHandlers = HttpApiBuilder.group(EngramApi, "portability", (handlers) =>
  Effect.map(Portability, (portability) =>
    handlers
      .handle("createExport", ({ path }) => Effect.flatMap(Principal, (p) => portability.createExport(p, path.space_id)))
      .handle("listExports", ({ path, urlParams }) => Effect.flatMap(Principal, (p) => portability.listExports(p, path.space_id, urlParams)))
      .handle("download", ({ path }) => Effect.flatMap(Principal, (p) => portability.download(p, path.space_id, path.job_id)))
      // The body is an export file of any size: read as a stream by the service, not decoded here.
      .handleRaw("createImport", ({ path, request }) => Effect.flatMap(Principal, (p) => portability.createImport(p, path.space_id, request)))
      .handle("listImports", ({ path, urlParams }) => Effect.flatMap(Principal, (p) => portability.listImports(p, path.space_id, urlParams)))))
