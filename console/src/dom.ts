/** A tiny element builder: the console renders plain DOM, no framework. */
type Child = Node | string | null | undefined | false
type Attrs = Record<string, string | boolean | number | undefined | ((event: Event) => void)>

export const h = (tag: string, attrs: Attrs = {}, ...children: ReadonlyArray<Child | ReadonlyArray<Child>>): HTMLElement => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue
    if (typeof value === "function") element.addEventListener(name.replace(/^on/, ""), value)
    else if (value === true) element.setAttribute(name, "")
    else element.setAttribute(name, String(value))
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    element.append(typeof child === "string" ? document.createTextNode(child) : child)
  }
  return element
}

/** A labelled input (every field has a visible label for keyboards and screen readers). */
let fields = 0
export const field = (label: string, input: HTMLElement) => {
  if (input.id === "") input.id = `field-${++fields}`
  return h("div", { class: "field" }, h("label", { for: input.id }, label), input)
}

/** The value of a named control of a form. */
export const valueOf = (form: HTMLFormElement, name: string): string => {
  const control = form.elements.namedItem(name)
  return control instanceof HTMLInputElement || control instanceof HTMLSelectElement || control instanceof HTMLTextAreaElement
    ? control.value
    : ""
}

/** "1 space", "2 spaces". */
export const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`

let announced = 0
let fading: ReturnType<typeof setTimeout> | undefined

/** Clears the live region's message. */
export const dismiss = () => {
  const region = document.getElementById("status")
  if (region === null) return
  region.textContent = ""
  region.className = ""
  if (fading !== undefined) clearTimeout(fading)
  fading = undefined
}

/** Clears a message left from an earlier page (one announced just now, by the action that navigated, stays). */
export const dismissStale = () => {
  if (Date.now() - announced > 1500) dismiss()
}

/**
 * Shows a message in the page's live region (read out by screen readers).
 * A notice goes by itself after a few seconds, an error stays until clicked
 * or the page changes; either closes when clicked.
 */
export const announce = (message: string, kind: "info" | "error" = "info") => {
  const region = document.getElementById("status")
  if (region === null) return
  region.textContent = message
  region.className = kind
  region.title = "Click to close"
  region.onclick = dismiss
  announced = Date.now()
  if (fading !== undefined) clearTimeout(fading)
  fading = kind === "info" ? setTimeout(dismiss, 6000) : undefined
}

export const formatDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "")

/** A table with a caption, column headers and rows of cells. */
export const table = (caption: string, headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<Node | string>>, attrs: Record<string, string> = {}) =>
  h("table", attrs,
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, headers.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell) => h("td", {}, cell))))))

/** A button that asks before it acts (deletes, revocations). */
export const confirmButton = (label: string, question: string, act: () => Promise<void>, ariaLabel?: string) =>
  h("button", {
    type: "button",
    class: "danger",
    ...(ariaLabel ? { "aria-label": ariaLabel } : {}),
    onclick: async () => {
      if (confirm(question)) await act()
    }
  }, label)
