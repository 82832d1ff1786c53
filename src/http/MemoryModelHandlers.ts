import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal } from "../domain/Principal.ts"
import { MemoryModels } from "../memoryModels/MemoryModels.ts"

export const MemoryModelHandlers = HttpApiBuilder.group(EngramApi, "memoryModels", (handlers) =>
  Effect.map(MemoryModels, (models) =>
    handlers
      .handle("create", ({ path, payload }) => Effect.flatMap(Principal, (p) => models.create(p, path.space_id, payload)))
      .handle("list", ({ path, urlParams }) => Effect.flatMap(Principal, (p) => models.list(p, path.space_id, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(Principal, (p) => models.get(p, path.space_id, path.model_id)))
      .handle("update", ({ path, payload }) => Effect.flatMap(Principal, (p) => models.update(p, path.space_id, path.model_id, payload)))
      .handle("refresh", ({ path }) => Effect.flatMap(Principal, (p) => models.refresh(p, path.space_id, path.model_id)))
      .handle("clear", ({ path }) => Effect.flatMap(Principal, (p) => models.clear(p, path.space_id, path.model_id)))
      .handle("delete", ({ path }) => Effect.flatMap(Principal, (p) => models.delete(p, path.space_id, path.model_id)))
      .handle("history", ({ path }) => Effect.flatMap(Principal, (p) => models.history(p, path.space_id, path.model_id)))))
