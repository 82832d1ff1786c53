import { api, field as fieldOf, list, numOrNull, str, strings } from "../api.ts"
import { announce, field, formatDate, h, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"
import { spaceHeader } from "./spaceNav.ts"

const TYPES = ["", "fact", "note", "experience", "summary"]
const STATES = ["active", "retired", "all"]

interface Filters {
  readonly q: string
  readonly type: string
  readonly state: string
  readonly user: string
}

const select = (name: string, options: ReadonlyArray<string>, chosen: string, empty = "any") =>
  h("select", { name }, options.map((o) => h("option", { value: o, selected: o === chosen }, o === "" ? empty : o)))

/** One memory opened: its text to edit, retire or restore, and its history. */
const detail = async (spaceId: string, memoryId: string, refresh: () => void) => {
  const base = `/v1/spaces/${encodeURIComponent(spaceId)}/memories/${encodeURIComponent(memoryId)}`
  const [memory, history] = await Promise.all([api("GET", base), api("GET", `${base}/history`)])
  const retired = str(memory, "state") === "retired"
  const text = h("textarea", { name: "text", rows: 3 }, str(memory, "text"))
  const form = h("form", { "aria-label": "Edit the memory" }, field("Text", text), h("button", { type: "submit" }, "Save"))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    await api("PATCH", base, { text: valueOf(form, "text") }).then(() => {
      announce("Memory saved.")
      refresh()
    }, failed)
  })
  const toggle = h("button", {
    type: "button",
    onclick: async () => {
      await api("PATCH", base, { state: retired ? "active" : "retired" }).then(() => {
        announce(retired ? "Memory restored." : "Memory retired.")
        refresh()
      }, failed)
    }
  }, retired ? "Restore" : "Retire")
  return h("section", { class: "card", "aria-labelledby": "memory-title", id: "memory-detail" },
    h("h2", { id: "memory-title" }, `Memory ${memoryId}`),
    h("p", {}, `${str(memory, "type")} · ${str(memory, "state")} · ${formatDate(str(memory, "date"))}`),
    strings(memory, "tags").length > 0 ? h("p", {}, `Tags: ${strings(memory, "tags").join(", ")}`) : null,
    form,
    toggle,
    h("h3", {}, "History"),
    h("ol", { class: "history" }, list(history, "entries").map((entry) => {
      const before = fieldOf(entry, "previous")
      return h("li", {}, `${str(entry, "change")} at ${formatDate(str(entry, "changed_at"))}`,
        before === undefined ? null : h("blockquote", { "aria-label": "What it said before" }, `${str(before, "text")} (${str(before, "state")})`))
    })))
}

/** The memories of a space: a search box (retrieve), filters by layer, state and user; open one to edit it. */
export const spacePage = async (spaceId: string, query: URLSearchParams, go: (hash: string) => void) => {
  const filters: Filters = { q: query.get("q") ?? "", type: query.get("type") ?? "", state: query.get("state") ?? "active", user: query.get("user") ?? "" }
  const here = (f: Filters, open?: string) => {
    const params = new URLSearchParams(Object.entries({ ...f, ...(open ? { open } : {}) }).filter(([, v]) => v !== ""))
    return `#/spaces/${encodeURIComponent(spaceId)}?${params}`
  }
  const rows: Array<{ id: string; text: string; type: string; state: string; date: string; score: string }> = []
  if (filters.q !== "") {
    const answer = await api("POST", "/v1/retrieve", {
      space_id: spaceId,
      query: filters.q,
      limit: 50,
      ...(filters.type ? { memory_type: [filters.type] } : {}),
      ...(filters.user ? { user_id: filters.user } : {})
    })
    for (const r of list(answer, "results")) {
      const relevance = numOrNull(r, "relevance_score")
      const score = relevance === null ? "" : relevance.toFixed(3)
      rows.push({ id: str(r, "memory_id"), text: str(r, "content"), type: str(r, "memory_type"), state: "active", date: str(r, "created_at"), score })
    }
  } else {
    const params = new URLSearchParams({ limit: "200", state: filters.state, ...(filters.type ? { type: filters.type } : {}), ...(filters.user ? { user_id: filters.user } : {}) })
    const answer = await api("GET", `/v1/spaces/${encodeURIComponent(spaceId)}/memories?${params}`)
    for (const m of list(answer, "items")) {
      rows.push({ id: str(m, "id"), text: str(m, "text"), type: str(m, "type"), state: str(m, "state"), date: str(m, "date"), score: "" })
    }
  }
  const search = h("form", { class: "inline", role: "search", "aria-label": "Search and filter memories" },
    field("Search", h("input", { name: "q", type: "search", value: filters.q, placeholder: "a question or words" })),
    field("Layer", select("type", TYPES, filters.type)),
    field("State", select("state", STATES, filters.state)),
    field("User", h("input", { name: "user", value: filters.user })),
    h("button", { type: "submit" }, "Search"))
  search.addEventListener("submit", (event) => {
    event.preventDefault()
    if (!(search instanceof HTMLFormElement)) return
    go(here({ q: valueOf(search, "q"), type: valueOf(search, "type"), state: valueOf(search, "state"), user: valueOf(search, "user") }))
  })
  const open = query.get("open")
  const refresh = () => go(`${here(filters, open ?? undefined)}&t=${Date.now()}`)
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, ""),
    h("p", {}, h("a", { href: `#/playground/${encodeURIComponent(spaceId)}` }, "Open the retrieve playground")),
    search,
    rows.length === 0
      ? h("p", { class: "empty" }, filters.q ? "Nothing recalled for that search." : "No memories match.")
      : h("table", { class: "memories" },
        h("caption", {}, filters.q ? `${rows.length} memories recalled, best first` : `${rows.length} memories, newest first`),
        h("thead", {}, h("tr", {}, ...["Memory", "Layer", "State", filters.q ? "Score" : "Date", ""].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows.map((row) =>
          h("tr", { "data-memory-id": row.id },
            h("td", {}, row.text),
            h("td", {}, row.type),
            h("td", {}, row.state),
            h("td", {}, filters.q ? row.score : formatDate(row.date)),
            h("td", {}, h("a", { href: here(filters, row.id), "aria-label": `Open memory ${row.id}` }, "Open")))))),
    open ? await detail(spaceId, open, refresh).catch((error: unknown) => {
      failed(error)
      return null
    }) : null)
}
