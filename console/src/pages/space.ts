import { type Answer, api, ApiError, choice, field as fieldOf, list, numOrNull, str, strings } from "../api.ts"
import { announce, field, formatDate, h, plural, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"
import { memoriesById, spaceHeader } from "./spaceNav.ts"

const TYPES = ["", "fact", "note", "experience", "summary"]
const STATES = ["active", "retired", "question", "all"]

interface Filters {
  readonly q: string
  readonly type: string
  readonly state: string
  readonly user: string
  /** Comma-separated, as typed: memories carrying any of them. */
  readonly tags: string
}

/** What the space's flag rules found in a memory when it was stored (its `metadata.security_flags`). */
const flagsOf = (memory: Answer<{ readonly metadata: { readonly [key: string]: unknown } }>) => strings(fieldOf(memory, "metadata"), "security_flags")

/** A mark beside a flagged memory's text: recalled, it is shown to models as data, never as instructions. */
const flagMark = (flags: ReadonlyArray<string>) =>
  flags.length === 0
    ? null
    : h("span", { class: "flag", title: "A rule flagged this text when it was stored; models are shown it as data only." },
      `Flagged: ${flags.join(", ")}`)

const tagList = (typed: string) => typed.split(",").map((t) => t.trim()).filter((t) => t !== "")

const select = (name: string, options: ReadonlyArray<string>, chosen: string, empty = "any") =>
  h("select", { name }, options.map((o) => h("option", { value: o, selected: o === chosen }, o === "" ? empty : o)))

/** One memory opened: its text to edit, retire or restore, and its history. */
const detail = async (spaceId: string, memoryId: string, refresh: () => void) => {
  const base: `/v1/spaces/${string}/memories/${string}` = `/v1/spaces/${encodeURIComponent(spaceId)}/memories/${encodeURIComponent(memoryId)}`
  const [found, history] = await Promise.all([memoriesById(spaceId, [memoryId]), api("GET", `${base}/history`)])
  const memory = found.get(memoryId)
  if (memory === undefined) throw new ApiError(404, "not_found", `memory ${memoryId} not found`)
  const state = str(memory, "state")
  // A retired memory is restored; a written question (kept, never recalled) can be made an ordinary memory.
  const inactive = state === "retired" || state === "question"
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
      await api("PATCH", base, { state: inactive ? "active" : "retired" }).then(() => {
        announce(inactive ? "Memory made active." : "Memory retired.")
        refresh()
      }, failed)
    }
  }, state === "retired" ? "Restore" : state === "question" ? "Make active" : "Retire")
  return h("section", { class: "card", "aria-labelledby": "memory-title", id: "memory-detail" },
    h("h2", { id: "memory-title" }, `Memory ${memoryId}`),
    h("p", {}, `${str(memory, "type")} · ${str(memory, "state")} · ${formatDate(str(memory, "date"))}`),
    flagsOf(memory).length > 0 ? h("p", {}, flagMark(flagsOf(memory))) : null,
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

/** The memories of a space: a search box (retrieve), filters by layer, state, user and tags; open one to edit it. */
export const spacePage = async (spaceId: string, query: URLSearchParams, go: (hash: string) => void) => {
  const filters: Filters = {
    q: query.get("q") ?? "",
    type: query.get("type") ?? "",
    state: query.get("state") ?? "active",
    user: query.get("user") ?? "",
    tags: query.get("tags") ?? ""
  }
  const here = (f: Filters, open?: string) => {
    const params = new URLSearchParams(Object.entries({ ...f, ...(open ? { open } : {}) }).filter(([, v]) => v !== ""))
    return `#/spaces/${encodeURIComponent(spaceId)}?${params}`
  }
  const rows: Array<{ id: string; text: string; type: string; state: string; tags: string; date: string; score: string; flags: ReadonlyArray<string> }> = []
  const tags = tagList(filters.tags)
  // A filter the API refuses (a reserved tag, say) is reported; the form stays to correct it.
  let refused: string | null = null
  try {
    if (filters.q !== "") {
      const answer = await api("POST", "/v1/retrieve", {
        space_id: spaceId,
        query: filters.q,
        limit: 50,
        ...(filters.type ? { memory_type: [choice(filters.type, ["fact", "note", "experience", "summary"])] } : {}),
        ...(filters.user ? { user_id: filters.user } : {}),
        // Like the list: memories carrying any of the tags (untagged ones left out).
        ...(tags.length > 0 ? { tags, tags_match: "any_strict" } : {})
      })
      for (const r of list(answer, "results")) {
        const relevance = numOrNull(r, "relevance_score")
        const score = relevance === null ? "" : relevance.toFixed(3)
        rows.push({
          id: str(r, "memory_id"), text: str(r, "content"), type: str(r, "memory_type"), state: "active", tags: "", date: str(r, "created_at"), score,
          flags: flagsOf(r)
        })
      }
    } else {
      const params = new URLSearchParams({
        limit: "200",
        state: filters.state,
        ...(filters.type ? { type: filters.type } : {}),
        ...(filters.user ? { user_id: filters.user } : {}),
        ...(tags.length > 0 ? { tags: tags.join(",") } : {})
      })
      const answer = await api("GET", `/v1/spaces/${encodeURIComponent(spaceId)}/memories?${params}`)
      for (const m of list(answer, "items")) {
        rows.push({
          id: str(m, "id"), text: str(m, "text"), type: str(m, "type"), state: str(m, "state"),
          tags: strings(m, "tags").join(", "), date: str(m, "date"), score: "", flags: flagsOf(m)
        })
      }
    }
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 422) throw error
    refused = error.message
  }
  const search = h("form", { class: "inline", role: "search", "aria-label": "Search and filter memories" },
    field("Search", h("input", { name: "q", type: "search", value: filters.q, placeholder: "a question or words" })),
    field("Layer", select("type", TYPES, filters.type)),
    field("State", select("state", STATES, filters.state)),
    field("User", h("input", { name: "user", value: filters.user })),
    field("Tags", h("input", { name: "tags", value: filters.tags, placeholder: "comma-separated", "aria-describedby": "tags-hint" })),
    h("button", { type: "submit" }, "Search"),
    h("p", { id: "tags-hint", class: "hint" }, "Tags: memories carrying any of them."))
  search.addEventListener("submit", (event) => {
    event.preventDefault()
    if (!(search instanceof HTMLFormElement)) return
    go(here({ q: valueOf(search, "q"), type: valueOf(search, "type"), state: valueOf(search, "state"), user: valueOf(search, "user"), tags: valueOf(search, "tags") }))
  })
  const open = query.get("open")
  const refresh = () => go(`${here(filters, open ?? undefined)}&t=${Date.now()}`)
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, ""),
    h("p", {}, h("a", { href: `#/playground/${encodeURIComponent(spaceId)}` }, "Open the retrieve playground")),
    search,
    refused !== null
      ? h("p", { class: "error-text", role: "alert" }, `The filters were refused: ${refused}`)
      : rows.length === 0
      ? h("p", { class: "empty" }, filters.q ? "Nothing recalled for that search." : "No memories match.")
      : h("table", { class: "memories" },
        h("caption", {}, filters.q ? `${plural(rows.length, "memory", "memories")} recalled, best first` : `${plural(rows.length, "memory", "memories")}, newest first`),
        // Retrieve's results carry no tags: the column is the list's only.
        h("thead", {}, h("tr", {}, ...["Memory", "Layer", "State", ...(filters.q ? ["Score"] : ["Tags", "Date"]), ""].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows.map((row) =>
          h("tr", { "data-memory-id": row.id },
            h("td", {}, row.text, row.flags.length > 0 ? " " : null, flagMark(row.flags)),
            h("td", {}, row.type),
            h("td", {}, row.state),
            filters.q ? h("td", { class: "score-cell" }, row.score) : [h("td", {}, row.tags), h("td", {}, formatDate(row.date))],
            h("td", {}, h("a", { href: here(filters, row.id), "aria-label": `Open memory ${row.id}` }, "Open")))))),
    open ? await detail(spaceId, open, refresh).catch((error: unknown) => {
      failed(error)
      return null
    }) : null)
}
