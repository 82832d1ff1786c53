import { api, list, numOrNull, str } from "../api.ts"
import { field, h, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"

/**
 * A query against a space: its ranked memories with their scores, and from
 * the retrieve's receipt why each memory was included or left out.
 */
export const playgroundPage = async (spaceId: string, go: (hash: string) => void, query: URLSearchParams) => {
  const spaces = list(await api("GET", "/v1/spaces?limit=1000"), "items").map((s) => str(s, "space_id"))
  const q = query.get("q") ?? ""
  const form = h("form", { class: "inline", "aria-label": "Run a retrieve" },
    field("Space", h("select", { name: "space" }, spaces.map((id) => h("option", { value: id, selected: id === spaceId }, id)))),
    field("Query", h("input", { name: "q", type: "search", value: q, required: true, size: 50 })),
    h("button", { type: "submit" }, "Retrieve"))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    go(`#/playground/${encodeURIComponent(valueOf(form, "space"))}?${new URLSearchParams({ q: valueOf(form, "q") })}`)
  })
  const out = h("div", { id: "playground-results" })
  if (q !== "" && spaceId !== "") {
    try {
      const answer = await api("POST", "/v1/retrieve", { space_id: spaceId, query: q, limit: 10, receipt: true, receipt_detail: "full" })
      const receipt = await api("GET", `/v1/receipts/${encodeURIComponent(str(answer, "receipt_id"))}`)
      const texts = new Map(list(answer, "results").map((r) => [str(r, "memory_id"), str(r, "content")]))
      out.append(
        h("h2", {}, "Ranked memories"),
        h("ol", { class: "ranked" }, list(answer, "results").map((r) =>
          h("li", { "data-memory-id": str(r, "memory_id") },
            h("span", { class: "score" }, (numOrNull(r, "relevance_score") ?? 0).toFixed(3)), " ",
            str(r, "content"),
            h("small", {}, ` (${str(r, "memory_type")}; included: ranked within the limit)`)))),
        h("h2", {}, "Why others were left out"),
        list(receipt, "excluded").length === 0
          ? h("p", {}, "Nothing was excluded.")
          : h("table", {},
            h("thead", {}, h("tr", {}, ...["Memory", "Reason", "Detail"].map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", {}, list(receipt, "excluded").map((e) =>
              h("tr", {}, h("td", {}, texts.get(str(e, "memory_id")) ?? str(e, "memory_id")), h("td", {}, str(e, "reason")), h("td", {}, str(e, "detail")))))),
        h("p", { class: "receipt" }, `Receipt ${str(receipt, "request_id")}: ${list(receipt, "included").length} included, ` +
          `${list(receipt, "excluded").length} excluded.`))
    } catch (error) {
      failed(error)
    }
  }
  return h("section", { "aria-labelledby": "playground-title" },
    h("h1", { id: "playground-title" }, "Retrieve playground"),
    form,
    out)
}
