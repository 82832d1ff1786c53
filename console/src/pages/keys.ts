import { api, choice, items, str } from "../api.ts"
import { announce, field, formatDate, h, plural, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"

/** The organization's API keys: create (the secret shown once, with a copy button) and revoke. */
export const keysPage = async (refresh: () => void) => {
  const keys = items(await api("GET", "/v1/api-keys"))
  const created = h("div", { id: "new-key", "aria-live": "polite" })
  const form = h("form", { class: "inline", "aria-label": "Create an API key" },
    field("Name", h("input", { name: "name", required: true, maxlength: 100 })),
    field("Environment", h("select", { name: "env" }, h("option", { value: "live" }, "live"), h("option", { value: "test" }, "test"))),
    h("button", { type: "submit" }, "Create key"))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    await api("POST", "/v1/api-keys", { name: valueOf(form, "name"), env: choice(valueOf(form, "env"), ["live", "test"]) }).then((key) => {
      const secret = str(key, "raw_key")
      const output = h("input", { id: "raw-key", readonly: true, value: secret, "aria-label": "The new key's secret", size: 60 })
      created.replaceChildren(h("div", { class: "card notice" },
        h("p", {}, "Copy this key now: it is shown only once."),
        output,
        h("button", {
          type: "button",
          onclick: async () => {
            await navigator.clipboard.writeText(secret).then(() => announce("Key copied."), () => announce("Copy it by hand: the clipboard is not available.", "error"))
          }
        }, "Copy"),
        h("button", { type: "button", onclick: refresh }, "Done")))
      announce(`Key ${str(key, "name")} created.`)
    }, failed)
  })
  const rows = keys.map((key) => {
    const active = str(key, "status") === "active"
    return h("tr", { "data-key-id": str(key, "id") },
      h("td", {}, str(key, "name")),
      h("td", {}, h("code", {}, `${str(key, "key_prefix")}…`)),
      h("td", {}, str(key, "env")),
      h("td", {}, str(key, "status")),
      h("td", {}, formatDate(str(key, "created_at"))),
      h("td", {}, formatDate(str(key, "last_used_at"))),
      h("td", {}, active
        ? h("button", {
          type: "button",
          class: "danger",
          "aria-label": `Revoke key ${str(key, "name")}`,
          onclick: async () => {
            if (!confirm(`Revoke the key ${str(key, "name")}? Agents using it stop at once.`)) return
            await api("DELETE", `/v1/api-keys/${encodeURIComponent(str(key, "id"))}`).then(() => {
              announce("Key revoked.")
              refresh()
            }, failed)
          }
        }, "Revoke")
        : ""))
  })
  return h("section", { "aria-labelledby": "keys-title" },
    h("h1", { id: "keys-title" }, "API keys"),
    form,
    created,
    h("table", {},
      h("caption", {}, plural(rows.length, "key")),
      h("thead", {}, h("tr", {}, ...["Name", "Prefix", "Env", "Status", "Created", "Last used", ""].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)))
}
