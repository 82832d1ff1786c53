/**
 * Engram's web console: a single page served by Engram itself at `/`,
 * signed in with the session accounts, calling the same HTTP API as agents.
 * Routes live in the URL's hash so a reload keeps the page.
 */
import { api, ApiError, session, str } from "./api.ts"
import { announce, dismissStale, h } from "./dom.ts"
import { documentsPage } from "./pages/documents.ts"
import { graphPage } from "./pages/graph.ts"
import { modelsPage, webhooksPage } from "./pages/hooks.ts"
import { keysPage } from "./pages/keys.ts"
import { notesPage } from "./pages/notes.ts"
import { organizationPage } from "./pages/organization.ts"
import { extractionPage, rulesPage } from "./pages/rules.ts"
import { exportsPage, membersPage } from "./pages/sharing.ts"
import { playgroundPage } from "./pages/playground.ts"
import { signIn } from "./pages/signin.ts"
import { spacePage } from "./pages/space.ts"
import { spacesPage } from "./pages/spaces.ts"

const root = document.getElementById("app")!
const go = (hash: string) => {
  if (location.hash === hash) void render()
  else location.hash = hash
}

const NAV: ReadonlyArray<readonly [string, string]> = [
  ["#/spaces", "Spaces"], ["#/keys", "API keys"], ["#/playground/", "Playground"], ["#/organization", "Organization"]
]

const nav = (current: string, who: string) =>
  h("nav", { "aria-label": "Console" },
    h("span", { class: "brand" }, "Engram"),
    h("ul", {}, NAV.map(([href, label]) =>
      h("li", {}, h("a", { href, ...(current.startsWith(href.replace(/\/$/, "")) ? { "aria-current": "page" } : {}) }, label)))),
    h("span", { class: "who" }, who),
    h("button", {
      type: "button",
      onclick: async () => {
        await api("POST", "/auth/logout").catch(() => undefined)
        session.clear()
        go("#/signin")
      }
    }, "Sign out"))

const page = async (path: string, query: URLSearchParams): Promise<HTMLElement> => {
  const refresh = () => void render()
  const [, first = "", second = "", third = ""] = path.split("/").map(decodeURIComponent)
  if (first === "keys") return keysPage(refresh)
  if (first === "organization") return organizationPage(refresh)
  if (first === "playground") return playgroundPage(second, go, query)
  if (first === "spaces" && second !== "") {
    switch (third) {
      case "notes": return notesPage(second, query)
      case "documents": return documentsPage(second, refresh)
      case "graph": return graphPage(second)
      case "models": return modelsPage(second, refresh)
      case "webhooks": return webhooksPage(second, refresh)
      case "rules": return rulesPage(second, refresh)
      case "extraction": return extractionPage(second, refresh)
      case "members": return membersPage(second, refresh)
      case "exports": return exportsPage(second, refresh)
      default: return spacePage(second, query, go)
    }
  }
  return spacesPage(refresh)
}

let rendering = 0
const render = async () => {
  const turn = ++rendering
  const [path = "", search = ""] = location.hash.replace(/^#/, "").split("?")
  if (session.token() === null || path === "/signin") {
    document.title = "Sign in · Engram"
    root.replaceChildren(h("main", { id: "main" }, signIn(go)))
    return
  }
  try {
    const me = await api("GET", "/v1/orgs/me")
    const content = await page(path, new URLSearchParams(search))
    if (turn !== rendering) return
    document.title = `${content.querySelector("h1")?.textContent ?? "Console"} · Engram`
    root.replaceChildren(nav(location.hash, `${str(me, "name")} (${str(me, "role")})`), h("main", { id: "main" }, content))
    // Focus moves to the new page's heading (focusable from script only), so Tab continues from there; on a
    // page that opened one item below its list (a memory), to that item's heading, scrolled into view.
    const heading = content.querySelector<HTMLElement>("#memory-detail h2") ?? content.querySelector<HTMLElement>("h1")
    heading?.setAttribute("tabindex", "-1")
    heading?.focus()
    heading?.scrollIntoView({ block: "start" })
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return go("#/signin")
    announce(error instanceof ApiError ? error.message : String(error), "error")
  }
}

// Back from the payment processor's checkout (its success and cancel pages are `/?checkout=...`).
const checkout = new URLSearchParams(location.search).get("checkout")
if (checkout === "success" || checkout === "canceled") {
  history.replaceState(null, "", "/#/organization")
  announce(checkout === "success"
    ? "Payment received: the plan changes as soon as the payment processor confirms it."
    : "Checkout cancelled; nothing changed.")
}

window.addEventListener("hashchange", () => {
  dismissStale()
  void render()
})
void render()
