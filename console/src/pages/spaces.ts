import { api, bool, list, str } from "../api.ts"
import { announce, field, formatDate, h, plural, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"

/** The organization's spaces: list, create, delete. */
export const spacesPage = async (refresh: () => void) => {
  const answer = await api("GET", "/v1/spaces?limit=1000")
  const rows = list(answer, "items").map((space) => {
    const id = str(space, "space_id")
    const remove = h("button", {
      type: "button",
      class: "danger",
      "aria-label": `Delete space ${id}`,
      onclick: async () => {
        if (!confirm(`Delete the space ${id} and everything in it?`)) return
        await api("DELETE", `/v1/spaces/${encodeURIComponent(id)}`).then(() => {
          announce(`Space ${id} deleted.`)
          refresh()
        }, failed)
      }
    }, "Delete")
    return h("tr", {},
      h("td", {}, h("a", { href: `#/spaces/${encodeURIComponent(id)}` }, id)),
      // The name opens the space too (the id is what the API takes; the name is what people look for).
      h("td", {}, str(space, "name") === "" ? "" : h("a", { href: `#/spaces/${encodeURIComponent(id)}`, tabindex: "-1" }, str(space, "name"))),
      h("td", {}, str(space, "space_type")),
      h("td", {}, bool(space, "shared") ? "shared with you" : "own"),
      h("td", {}, formatDate(str(space, "created_at"))),
      h("td", {}, bool(space, "shared") ? "" : remove))
  })
  const form = h("form", { class: "inline", "aria-label": "Create a space" },
    field("Space id", h("input", { name: "space_id", placeholder: "generated when empty", pattern: "[A-Za-z0-9][A-Za-z0-9._-]{0,127}" })),
    field("Name", h("input", { name: "name" })),
    h("button", { type: "submit" }, "Create space"))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    const spaceId = valueOf(form, "space_id").trim()
    const name = valueOf(form, "name").trim()
    await api("POST", "/v1/spaces", { ...(spaceId ? { space_id: spaceId } : {}), ...(name ? { name } : {}) }).then((created) => {
      announce(`Space ${str(created, "space_id")} created.`)
      refresh()
    }, failed)
  })
  return h("section", { "aria-labelledby": "spaces-title" },
    h("h1", { id: "spaces-title" }, "Spaces"),
    form,
    rows.length === 0
      ? h("p", {}, "No spaces yet: create one above, or record a memory through the API.")
      : h("table", {},
        h("caption", {}, plural(rows.length, "space")),
        h("thead", {}, h("tr", {}, ...["Id", "Name", "Type", "Owner", "Created", ""].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows)))
}
