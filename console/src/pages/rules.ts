import { api, bool, choice, list, str } from "../api.ts"
import { announce, confirmButton, field, h, plural, table, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"
import { spaceBase, spaceHeader } from "./spaceNav.ts"

const DETECTORS = ["email", "phone", "credit_card", "api_key", "private_key", "iban", "us_ssn", "prompt_injection", "regex"] as const
const ACTIONS = ["redact", "block", "flag"] as const
const MODES = ["auto", "verbatim", "custom"] as const

/** A space's rules (owner only): add, enable or disable, delete. */
export const rulesPage = async (spaceId: string, refresh: () => void) => {
  const base = `${spaceBase(spaceId)}/rules` as const
  const rules = list(await api("GET", base), "items")
  const form = h("form", { class: "inline", "aria-label": "Add a rule" },
    field("Rule name", h("input", { name: "name", required: true, maxlength: 100 })),
    field("Detector", h("select", { name: "detector" }, DETECTORS.map((d) => h("option", { value: d }, d)))),
    field("Pattern (regex only)", h("input", { name: "pattern" })),
    field("Action", h("select", { name: "action" }, ACTIONS.map((a) => h("option", { value: a }, a)))),
    h("button", { type: "submit" }, "Add rule"))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    const detector = choice(valueOf(form, "detector"), DETECTORS)
    await api("POST", base, {
      name: valueOf(form, "name"),
      detector,
      action: choice(valueOf(form, "action"), ACTIONS),
      ...(detector === "regex" ? { pattern: valueOf(form, "pattern") } : {})
    }).then(() => {
      announce("Rule added.")
      refresh()
    }, failed)
  })
  const rows = rules.map((rule) => {
    const path = `${base}/${encodeURIComponent(str(rule, "id"))}` as const
    const enabled = bool(rule, "enabled")
    return [
      str(rule, "name"),
      str(rule, "detector") + (str(rule, "pattern") ? ` /${str(rule, "pattern")}/` : ""),
      str(rule, "action"),
      enabled ? "enabled" : "disabled",
      // Each button's name starts with its visible word, so a voice user can say what they see.
      h("span", { class: "actions" },
        h("button", {
          type: "button",
          "aria-label": `${enabled ? "Disable" : "Enable"} rule ${str(rule, "name")}`,
          onclick: () => api("PATCH", path, { enabled: !enabled }).then(refresh, failed)
        }, enabled ? "Disable" : "Enable"),
        confirmButton("Delete", `Delete the rule ${str(rule, "name")}?`, () => api("DELETE", path).then(refresh, failed), `Delete rule ${str(rule, "name")}`))
    ]
  })
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, "rules"),
    h("h2", {}, "Rules"),
    h("p", {}, "Rules redact or block secrets in every write before anything is stored."),
    form,
    table(plural(rows.length, "rule"), ["Name", "Detector", "Action", "State", ""], rows, { id: "rules" }))
}

/** A space's extraction settings: mode, guidance, custom prompt; reset to the defaults. */
export const extractionPage = async (spaceId: string, refresh: () => void) => {
  const path = `${spaceBase(spaceId)}/extraction-settings` as const
  const settings = await api("GET", path)
  const mode = str(settings, "mode") || "auto"
  const form = h("form", { "aria-label": "Extraction settings", class: "card" },
    field("Mode", h("select", { name: "mode" }, MODES.map((m) => h("option", { value: m, selected: m === mode }, m)))),
    field("Guidance (what to keep)", h("textarea", { name: "guidance", rows: 3, maxlength: 2000 }, str(settings, "guidance"))),
    field("Custom prompt (custom mode)", h("textarea", { name: "custom_prompt", rows: 4, maxlength: 8000 }, str(settings, "custom_prompt"))),
    h("button", { type: "submit" }, "Save settings"), " ",
    confirmButton("Reset to defaults", "Return this space to the default extraction?", () => api("DELETE", path).then(refresh, failed)))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    const guidance = valueOf(form, "guidance").trim()
    const prompt = valueOf(form, "custom_prompt").trim()
    await api("PUT", path, { mode: choice(valueOf(form, "mode"), MODES), guidance: guidance || null, custom_prompt: prompt || null }).then(() => {
      announce("Extraction settings saved; they apply to the next write.")
      refresh()
    }, failed)
  })
  const updated = str(settings, "updated_at")
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, "extraction"),
    h("h2", {}, "Extraction settings"),
    h("p", {}, updated ? `Last changed ${new Date(updated).toLocaleString()}.` : "This space uses the defaults."),
    form)
}
