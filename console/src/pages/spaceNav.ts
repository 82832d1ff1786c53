import { api, list, str } from "../api.ts"
import { h } from "../dom.ts"

export const SPACE_TABS: ReadonlyArray<readonly [string, string]> = [
  ["", "Memories"], ["notes", "Notes"], ["documents", "Documents"], ["graph", "Graph"], ["models", "Memory models"], ["webhooks", "Webhooks"],
  ["rules", "Rules"], ["extraction", "Extraction"], ["members", "Members"], ["exports", "Exports"]
]

/** The space's heading and its sections, the current one marked. */
export const spaceHeader = (spaceId: string, current: string) => {
  const base = `#/spaces/${encodeURIComponent(spaceId)}`
  return h("header", {},
    h("p", {}, h("a", { href: "#/spaces" }, "← Spaces")),
    h("h1", { id: "space-title" }, `Space ${spaceId}`),
    h("nav", { class: "tabs", "aria-label": "Space sections" }, h("ul", {}, SPACE_TABS.map(([tab, label]) =>
      h("li", {}, h("a", { href: tab === "" ? base : `${base}/${tab}`, ...(tab === current ? { "aria-current": "page" } : {}) }, label))))))
}

export const spaceBase = (spaceId: string): `/v1/spaces/${string}` => `/v1/spaces/${encodeURIComponent(spaceId)}`

/**
 * Memories read by id, whatever their state or layer, through the list's `ids` filter (the API has no
 * single-memory GET): by id, those the space still has.
 */
export const memoriesById = async (spaceId: string, ids: ReadonlyArray<string>) => {
  // The filter takes 100 ids a call (a summary can list more notes than that).
  const chunks = Array.from({ length: Math.ceil(ids.length / 100) }, (_, i) => ids.slice(i * 100, i * 100 + 100))
  const answers = await Promise.all(chunks.map((chunk) => {
    const params = new URLSearchParams({ ids: chunk.join(","), state: "all", prefer_observations: "false", limit: String(chunk.length) })
    return api("GET", `${spaceBase(spaceId)}/memories?${params}`)
  }))
  return new Map(answers.flatMap((answer) => list(answer, "items")).map((memory) => [str(memory, "id"), memory]))
}
