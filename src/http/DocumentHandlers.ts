import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal } from "../domain/Principal.ts"
import { Documents } from "../documents/Documents.ts"

export const DocumentHandlers = HttpApiBuilder.group(EngramApi, "documents", (handlers) =>
  Effect.map(Documents, (documents) =>
    handlers
      .handle("upload", ({ path, payload }) =>
        Effect.flatMap(Principal, (p) => documents.upload(p, path.space_id, payload)))
      .handle("list", ({ path, urlParams }) => Effect.flatMap(Principal, (p) => documents.list(p, path.space_id, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(Principal, (p) => documents.get(p, path.space_id, path.document_id)))
      .handle("delete", ({ path }) => Effect.flatMap(Principal, (p) => documents.remove(p, path.space_id, path.document_id)))
      .handle("entities", ({ path, urlParams }) => Effect.flatMap(Principal, (p) => documents.entities(p, path.space_id, urlParams)))
      .handle("entity", ({ path }) => Effect.flatMap(Principal, (p) => documents.entity(p, path.space_id, path.entity_id)))
      .handle("graph", ({ path, urlParams }) => Effect.flatMap(Principal, (p) => documents.graph(p, path.space_id, urlParams)))))
