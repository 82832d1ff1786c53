import { api, choice, list, num, session, str } from "../api.ts"
import { announce, confirmButton, field, formatDate, h, plural, table, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"
import { spaceBase, spaceHeader } from "./spaceNav.ts"

/** Who can reach the space: its owning organization and those it is shared with (read, or read and write). */
export const membersPage = async (spaceId: string, refresh: () => void) => {
  const base = `${spaceBase(spaceId)}/members` as const
  const members = list(await api("GET", base), "items")
  const form = h("form", { class: "inline", "aria-label": "Share the space" },
    field("Organization id", h("input", { name: "org_id", required: true, placeholder: "org_…" })),
    field("Access", h("select", { name: "access" }, h("option", { value: "read" }, "read"), h("option", { value: "write" }, "read and write"))),
    h("button", { type: "submit" }, "Share"))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    await api("POST", base, { org_id: valueOf(form, "org_id").trim(), access: choice(valueOf(form, "access"), ["read", "write"]) }).then(() => {
      announce("Shared.")
      refresh()
    }, failed)
  })
  const rows = members.map((m) => [
    str(m, "name"), h("code", {}, str(m, "org_id")), str(m, "role"), str(m, "access"), formatDate(str(m, "added_at")),
    str(m, "role") === "owner" ? "" : confirmButton("Remove", `Stop sharing with ${str(m, "name")}?`, () =>
      api("DELETE", `${base}/${encodeURIComponent(str(m, "org_id"))}`).then(refresh, failed), `Remove ${str(m, "name")}`)
  ])
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, "members"),
    h("h2", {}, "Members"),
    form,
    table(plural(rows.length, "organization"), ["Organization", "Id", "Role", "Access", "Added", ""], rows))
}

/** Exports of the space: start one, follow it, download the NDJSON file. */
export const exportsPage = async (spaceId: string, refresh: () => void) => {
  const base = `${spaceBase(spaceId)}/exports` as const
  const exports = list(await api("GET", base), "items")
  const download = async (jobId: string) => {
    const token = session.token()
    const response = await fetch(`${base}/${encodeURIComponent(jobId)}/download`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
    if (!response.ok) throw new Error(`download failed (${response.status})`)
    const link = h("a", { href: URL.createObjectURL(await response.blob()), download: `${spaceId}-${jobId}.ndjson` })
    link.click()
  }
  const rows = exports.map((e) => [
    h("code", {}, str(e, "job_id")), str(e, "status"), formatDate(str(e, "created_at")), String(num(e, "item_count")), `${num(e, "bytes")} bytes`,
    str(e, "status") === "completed"
      ? h("button", { type: "button", onclick: () => download(str(e, "job_id")).catch(failed) }, "Download")
      : str(e, "error")
  ])
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, "exports"),
    h("h2", {}, "Exports"),
    h("p", {}, h("button", {
      type: "button",
      onclick: () => api("POST", base).then(() => {
        announce("Export started.")
        refresh()
      }, failed)
    }, "Export the space"), " ", h("button", { type: "button", onclick: refresh }, "Refresh")),
    table(plural(rows.length, "export"), ["Job", "Status", "Started", "Items", "Size", ""], rows, { id: "exports" }))
}
