import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Catalog } from "../../services/llm/Catalog.ts"

/** The catalog, cheapest first; free and open to any key or session of an organization. */
export const ModelHandlers = HttpApiBuilder.group(EngramApi, "models", (handlers) =>
  Effect.map(Catalog, (catalog) => handlers.handle("list", () => Effect.succeed({ object: "list" as const, data: catalog.entries }))))
