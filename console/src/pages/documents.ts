import type { WireAnswer } from "../../../src/client/Wire.ts"
import { Answer, api, field as objectOf, list, num, refusalOf, session, str, strings } from "../api.ts"
import { announce, confirmButton, field, formatDate, h, plural, table } from "../dom.ts"
import { failed } from "./failed.ts"
import { spaceBase, spaceHeader } from "./spaceNav.ts"

/** Sends the form's files with the upload's progress shown; answers the job ids. */
const send = (spaceId: string, form: FormData, bar: HTMLProgressElement) =>
  new Promise<ReadonlyArray<string>>((resolve, reject) => {
    const request = new XMLHttpRequest()
    request.open("POST", `${spaceBase(spaceId)}/documents`)
    const token = session.token()
    if (token !== null) request.setRequestHeader("authorization", `Bearer ${token}`)
    request.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) {
        bar.max = event.total
        bar.value = event.loaded
      }
    })
    request.addEventListener("load", () => {
      const json: unknown = request.responseText === "" ? null : JSON.parse(request.responseText)
      const answer = new Answer<WireAnswer<"POST", `/v1/spaces/${string}/documents`>>(json)
      if (request.status === 202) resolve(strings(answer, "job_ids"))
      else reject(new Error(refusalOf(json)?.message || `upload failed (${request.status})`))
    })
    request.addEventListener("error", () => reject(new Error("the upload was interrupted")))
    request.send(form)
  })

/** Polls a document job until it settles, showing its stage and progress. */
const follow = async (spaceId: string, jobId: string, row: HTMLElement) => {
  for (;;) {
    const job = await api("GET", `${spaceBase(spaceId)}/jobs/${encodeURIComponent(jobId)}`)
    const document = objectOf(job, "document")
    const status = str(job, "status")
    const bar = h("progress", { max: Math.max(1, num(document, "total")), value: num(document, "done"), "aria-label": `Processing ${str(document, "filename")}` })
    row.replaceChildren(h("span", {}, `${str(document, "filename")}: ${str(document, "stage") || status}`), " ", bar,
      str(job, "error") ? h("span", { class: "error-text" }, ` ${str(job, "error")}`) : "")
    row.dataset.status = status
    if (status !== "queued" && status !== "processing") return status
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

/**
 * The space's documents: uploads and named documents, and (when `writes`)
 * the one document every plain write makes, which has nothing else to show.
 */
const documentsTable = async (spaceId: string, refresh: () => void, writes: boolean) => {
  const answer = await api("GET", `${spaceBase(spaceId)}/documents?limit=1000${writes ? "" : "&source=file,custom"}`)
  const rows = list(answer, "documents").map((d) => [
    str(d, "filename") || str(d, "document_id"),
    str(d, "source"),
    String(num(d, "memory_count")),
    formatDate(str(d, "created_at")),
    confirmButton("Delete", `Delete ${str(d, "filename") || str(d, "document_id")} and its memories?`, () =>
      api("DELETE", `${spaceBase(spaceId)}/documents/${encodeURIComponent(str(d, "document_id"))}`).then(refresh, failed),
      `Delete document ${str(d, "filename") || str(d, "document_id")}`)
  ])
  if (rows.length === 0) {
    return h("p", { id: "documents", class: "empty" }, writes ? "No documents yet." : "No uploaded or named documents yet: upload files above.")
  }
  return table(writes ? plural(num(answer, "total"), "document") : `${plural(num(answer, "total"), "document")} uploaded or named`,
    ["File", "Source", "Memories", "Added", ""], rows, { id: "documents" })
}

/** A space's documents: upload with a progress bar (then each file's processing), list and delete. */
export const documentsPage = async (spaceId: string, refresh: () => void) => {
  let writes = false
  let documents = await documentsTable(spaceId, refresh, writes)
  const replaceTable = async () => {
    const fresh = await documentsTable(spaceId, refresh, writes)
    documents.replaceWith(fresh)
    documents = fresh
  }
  const showWrites = h("input", { type: "checkbox", id: "show-writes" })
  showWrites.addEventListener("change", () => {
    writes = showWrites instanceof HTMLInputElement && showWrites.checked
    void replaceTable().catch(failed)
  })
  const bar = h("progress", { max: 1, value: 0, "aria-label": "Upload progress" })
  if (!(bar instanceof HTMLProgressElement)) throw new Error("no progress element")
  const jobs = h("ul", { id: "document-jobs", "aria-live": "polite" })
  const input = h("input", { type: "file", name: "files", multiple: true, required: true })
  const form = h("form", { class: "inline", "aria-label": "Upload documents" },
    field("Files", input),
    field("Split into", h("select", { name: "strategy" }, ...["chunks", "pages", "facts"].map((s) => h("option", { value: s }, s)))),
    h("button", { type: "submit" }, "Upload"), bar)
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    try {
      const ids = await send(spaceId, new FormData(form), bar)
      announce(`Uploaded; ${ids.length} file(s) processing.`)
      const settled = await Promise.all(ids.map((id) => {
        const row = h("li", { "data-job-id": id }, id)
        jobs.append(row)
        return follow(spaceId, id, row)
      }))
      announce(`Documents ${settled.join(", ")}.`)
      // The list is read again; the jobs above stay, showing how each file ended.
      await replaceTable()
    } catch (error) {
      failed(error)
    }
  })
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, "documents"),
    h("h2", {}, "Documents"),
    form,
    jobs,
    h("p", { class: "field inline-check" }, showWrites, h("label", { for: "show-writes" }, " Also list the document each recorded write makes")),
    documents)
}
