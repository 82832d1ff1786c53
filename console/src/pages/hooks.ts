import { api, bool, list, num, str, strings } from "../api.ts"
import { announce, confirmButton, field, formatDate, h, table, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"
import { spaceBase, spaceHeader } from "./spaceNav.ts"

const EVENTS = ["memory.created", "memory.consolidated", "security.policy_triggered"]

/** A space's webhooks (the secret shown once) with each one's recent deliveries. */
export const webhooksPage = async (spaceId: string, refresh: () => void) => {
  const base = `${spaceBase(spaceId)}/webhooks` as const
  const hooks = list(await api("GET", base), "items")
  const created = h("div", { "aria-live": "polite" })
  const form = h("form", { class: "inline", "aria-label": "Add a webhook" },
    field("URL", h("input", { name: "url", type: "url", required: true, size: 40, placeholder: "https://…" })),
    h("fieldset", {}, h("legend", {}, "Events"), EVENTS.map((e) =>
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "event", value: e, checked: true }), ` ${e}`))),
    h("button", { type: "submit" }, "Add webhook"))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    const events = [...form.querySelectorAll<HTMLInputElement>("input[name=event]:checked")].map((box) => box.value)
    await api("POST", base, { url: valueOf(form, "url"), event_types: events }).then((hook) => {
      created.replaceChildren(h("p", { class: "card notice" }, "Signing secret (shown once): ", h("code", {}, str(hook, "secret"))))
      announce("Webhook added.")
    }, failed)
  })
  const sections = await Promise.all(hooks.map(async (hook) => {
    const path = `${base}/${encodeURIComponent(str(hook, "id"))}` as const
    const deliveries = list(await api("GET", `${path}/deliveries?limit=10`), "items")
    return h("article", { class: "card" },
      h("h3", {}, str(hook, "url")),
      h("p", {}, `${bool(hook, "enabled") ? "enabled" : "disabled"} · ${strings(hook, "event_types").join(", ")}`),
      h("button", { type: "button", onclick: () => api("PATCH", path, { enabled: !bool(hook, "enabled") }).then(refresh, failed) },
        bool(hook, "enabled") ? "Disable" : "Enable"), " ",
      confirmButton("Delete", `Delete the webhook to ${str(hook, "url")}?`, () => api("DELETE", path).then(refresh, failed)),
      table("Recent deliveries", ["Event", "Status", "Attempts", "Answer", "When"], deliveries.map((d) => [
        str(d, "event_type"), str(d, "status"), String(num(d, "attempts")),
        str(d, "error") || (num(d, "response_status") ? String(num(d, "response_status")) : ""), formatDate(str(d, "created_at"))
      ])))
  }))
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, "webhooks"),
    h("h2", {}, "Webhooks"),
    form,
    created,
    sections.length === 0 ? h("p", { class: "empty" }, "No webhooks.") : h("div", {}, sections))
}

/** A space's memory models (standing syntheses): create, refresh, read, delete. */
export const modelsPage = async (spaceId: string, refresh: () => void) => {
  const base = `${spaceBase(spaceId)}/models` as const
  const models = list(await api("GET", base), "items")
  const form = h("form", { class: "inline", "aria-label": "Create a memory model" },
    field("Model name", h("input", { name: "name", required: true, maxlength: 200 })),
    field("Standing query", h("input", { name: "query", required: true, size: 40 })),
    h("button", { type: "submit" }, "Create model"))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    await api("POST", base, { name: valueOf(form, "name"), query: valueOf(form, "query") }).then(() => {
      announce("Model created; its first content is being written.")
      refresh()
    }, failed)
  })
  const cards = models.map((m) => {
    const path = `${base}/${encodeURIComponent(str(m, "id"))}` as const
    return h("article", { class: "card", "data-model-id": str(m, "id") },
      h("h3", {}, str(m, "name")),
      h("p", {}, `“${str(m, "query")}” · ${str(m, "last_refreshed_at") ? `refreshed ${formatDate(str(m, "last_refreshed_at"))}` : "not written yet"}` +
        (bool(m, "is_stale") ? " · stale" : "")),
      str(m, "content") ? h("pre", { class: "model" }, str(m, "content")) : h("p", { class: "empty" }, "No content yet."),
      h("button", { type: "button", onclick: () => api("POST", `${path}/refresh`).then(() => announce("Refresh queued."), failed) }, "Refresh"), " ",
      confirmButton("Delete", `Delete the model ${str(m, "name")}?`, () => api("DELETE", path).then(refresh, failed)))
  })
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, "models"),
    h("h2", {}, "Memory models"),
    form,
    cards.length === 0 ? h("p", { class: "empty" }, "No memory models.") : h("div", {}, cards))
}
