import { api, list, num, str, strings } from "../api.ts"
import { field, formatDate, h, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"
import { memoriesById, spaceBase, spaceHeader } from "./spaceNav.ts"

/** What consolidation writes (docs/consolidation.md), and what each is built from. */
const LAYERS: ReadonlyArray<{ readonly type: string; readonly label: string; readonly sources: string }> = [
  { type: "note", label: "notes", sources: "fact" },
  { type: "experience", label: "experiences", sources: "fact" },
  { type: "summary", label: "summaries", sources: "note" }
]
const counted = (n: number, layer: { readonly type: string; readonly label: string }) => `${n} ${n === 1 ? layer.type : layer.label}`
const PAGE = 20
const SCOPES = [["user", "user_id"], ["agent", "agent_id"], ["session", "session_id"]] as const

/** A memory opened on the space's memory page (any state: a source may have been retired since). */
export const memoryHref = (spaceId: string, memoryId: string) =>
  `#/spaces/${encodeURIComponent(spaceId)}?${new URLSearchParams({ state: "all", open: memoryId })}`

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * The memories a note was built from (`source_ids`), each a link that opens
 * it; their texts are read when the list is first opened, so a page of notes
 * costs one call.
 */
const sources = (spaceId: string, ids: ReadonlyArray<string>, word: string) => {
  const items = ids.map((id) => {
    const link = h("a", { href: memoryHref(spaceId, id), "data-source-id": id }, id)
    return { id, link, item: h("li", {}, link) }
  })
  const details = h("details", { class: "sources" },
    h("summary", {}, `Built from ${plural(ids.length, word)}`),
    h("ol", {}, items.map((i) => i.item)))
  let read = false
  details.addEventListener("toggle", () => {
    if (read || !(details instanceof HTMLDetailsElement) || !details.open) return
    read = true
    void memoriesById(spaceId, ids).then((found) => {
      for (const { id, item, link } of items) {
        const memory = found.get(id)
        if (memory === undefined) continue
        link.textContent = str(memory, "text")
        item.append(h("small", {}, ` ${str(memory, "type")}, ${formatDate(str(memory, "date"))}${str(memory, "state") === "retired" ? ", retired" : ""}`))
      }
      details.dataset.read = "true"
    }, failed)
  })
  return details
}

/** A space's consolidated memories (notes by default): each with what it says and the memories it was built from. */
export const notesPage = async (spaceId: string, query: URLSearchParams) => {
  const layer = LAYERS.find((l) => l.type === query.get("layer")) ?? LAYERS[0]!
  const offset = Math.max(0, Math.floor(Number(query.get("offset") ?? "0")) || 0)
  const answer = await api("GET", `${spaceBase(spaceId)}/memories?${new URLSearchParams({ type: layer.type, limit: String(PAGE), offset: String(offset) })}`)
  const total = num(answer, "total")
  const here = (params: Record<string, string>) => `#/spaces/${encodeURIComponent(spaceId)}/notes?${new URLSearchParams(params)}`
  const form = h("form", { class: "inline", "aria-label": "Choose what to show" },
    field("Layer", h("select", { name: "layer" }, LAYERS.map((l) => h("option", { value: l.type, selected: l.type === layer.type }, l.label)))),
    h("button", { type: "submit" }, "Show"))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    if (form instanceof HTMLFormElement) location.hash = here({ layer: valueOf(form, "layer") })
  })
  const cards = list(answer, "items").map((memory) => {
    const id = str(memory, "id")
    const scope = SCOPES.flatMap(([label, key]) => (str(memory, key) ? [`${label} ${str(memory, key)}`] : []))
    return h("article", { class: "card note", "data-memory-id": id, "aria-label": `${layer.type} ${id}` },
      h("p", { class: "note-text" }, str(memory, "text")),
      h("p", { class: "meta" },
        [`updated ${formatDate(str(memory, "updated_at"))}`, ...scope, ...(strings(memory, "tags").length > 0 ? [`tags ${strings(memory, "tags").join(", ")}`] : [])].join(" · "),
        " · ",
        h("a", { href: memoryHref(spaceId, id), "aria-label": `Open ${layer.type} ${id}: its history, edit or retire` }, "Open")),
      sources(spaceId, strings(memory, "source_ids"), layer.sources))
  })
  const pages = total > PAGE
    ? h("nav", { class: "pages", "aria-label": "Pages" },
      offset > 0 ? h("a", { href: here({ layer: layer.type, offset: String(Math.max(0, offset - PAGE)) }) }, "Newer") : null,
      h("span", {}, ` ${offset + 1}-${Math.min(total, offset + PAGE)} of ${total} `),
      offset + PAGE < total ? h("a", { href: here({ layer: layer.type, offset: String(offset + PAGE) }) }, "Older") : null)
    : null
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, "notes"),
    h("h2", {}, "Notes"),
    h("p", {}, "Consolidation writes notes from related facts (and experiences, and summaries of several notes); the facts stay as the evidence behind them."),
    form,
    cards.length === 0
      ? h("p", { class: "empty" }, `No ${layer.label} yet: they are written a few seconds after related facts are recorded.`)
      : h("div", { id: "notes" }, h("p", { class: "caption" }, `${counted(total, layer)}, newest first`), cards),
    pages)
}
