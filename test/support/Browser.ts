/**
 * Driving the web console in Debian's Chromium (playwright-core, no browser
 * download): pages that record console errors, axe-core injected into every
 * page and run on demand, the keyboard walked with Tab, the phone-width
 * checks, and screenshots when CONSOLE_SCREENSHOTS names a folder.
 */
import { existsSync, mkdirSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { expect } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"

export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path))
const SHOTS = process.env.CONSOLE_SCREENSHOTS
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js")

export const ui = <A>(run: () => Promise<A>) => Effect.promise(run)

export { baseUrl } from "./Http.ts"

export const browser = Effect.acquireRelease(
  Effect.promise((): Promise<Browser> => {
    if (CHROMIUM === undefined) throw new Error("Chromium is not installed (apt-get install chromium); .ci/run installs it")
    return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
  }),
  (b) => Effect.promise(() => b.close())
)

/**
 * A page that records every console error and uncaught exception, so the test
 * can require none, with axe-core loaded into every document it opens (an init
 * script: the console's CSP allows no injected script tags, and needs none).
 */
export const openPage = (b: Browser, width: number, height = 900) =>
  Effect.promise(async () => {
    const context = await b.newContext({ viewport: { width, height } })
    await context.addInitScript({ path: AXE })
    const page = await context.newPage()
    const errors: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text())
    })
    page.on("pageerror", (error) => errors.push(error.message))
    return { page, errors }
  })

export const shot = (page: Page, name: string) =>
  Effect.promise(async () => {
    if (SHOTS === undefined) return
    mkdirSync(SHOTS, { recursive: true })
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
  })

const Violations = Schema.Array(Schema.Struct({
  id: Schema.String,
  impact: Schema.NullOr(Schema.String),
  help: Schema.String,
  nodes: Schema.Array(Schema.String)
}))

/** axe-core's rules (WCAG 2.x A and AA, and its best practices) over the whole document, as it stands. */
const AXE_RUN = `axe.run(document, { resultTypes: ["violations"] }).then((result) => result.violations.map((v) => ({
  id: v.id, impact: v.impact ?? null, help: v.help,
  nodes: v.nodes.map((n) => n.target.join(" ") + ": " + (n.failureSummary ?? "").replace(/\\s+/g, " "))
})))`

/** Fails on any violation of impact serious or critical (labels, contrast, names of controls, ...), naming the page and the elements. */
export const audit = (page: Page, where: string) =>
  Effect.gen(function*() {
    const found = Schema.decodeUnknownSync(Violations)(yield* ui(() => page.evaluate(AXE_RUN)))
    const serious = found.filter((v) => v.impact === "serious" || v.impact === "critical")
    expect(serious.map((v) => `${where}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.slice(0, 5).join(" | ")}`)).toEqual([])
  })

/** Audits the page, then saves its screenshot. */
export const check = (page: Page, name: string) => Effect.zipRight(audit(page, name), shot(page, name))

const Focused = Schema.Struct({ name: Schema.String, tag: Schema.String, visible: Schema.Boolean })

/** The focused element: its accessible name (roughly), and whether a focus style shows (an outline or a shadow). */
const FOCUSED = `(() => {
  const el = document.activeElement
  if (el === null || el === document.body) return { name: "", tag: "body", visible: true }
  const labels = "labels" in el && el.labels ? [...el.labels].map((l) => l.textContent).join(" ") : ""
  const name = (el.getAttribute("aria-label") || labels || el.textContent || el.getAttribute("placeholder") || "").trim().replace(/\\s+/g, " ")
  const style = getComputedStyle(el)
  const outline = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0
  const shadow = style.boxShadow !== "none"
  return { name, tag: el.tagName.toLowerCase(), visible: outline || shadow }
})()`

/**
 * Presses Tab until the focused element's name matches, requiring a visible
 * focus style at every stop on the way; answers the names passed.
 */
export const tabTo = (page: Page, name: RegExp, most = 80) =>
  Effect.gen(function*() {
    const passed: Array<string> = []
    for (let i = 0; i < most; i++) {
      yield* ui(() => page.keyboard.press("Tab"))
      const focused = Schema.decodeUnknownSync(Focused)(yield* ui(() => page.evaluate(FOCUSED)))
      expect(focused.visible, `no visible focus style on <${focused.tag}> "${focused.name}"`).toBe(true)
      passed.push(focused.name)
      if (name.test(focused.name)) return passed
    }
    return yield* Effect.dieMessage(`Tab never reached ${name} in ${most} presses; it passed: ${passed.join(" → ")}`)
  })

const Fit = Schema.Struct({
  scrollWidth: Schema.Number,
  innerWidth: Schema.Number,
  outside: Schema.Array(Schema.String),
  wide: Schema.Array(Schema.String)
})

/** The document's width, and the navigation links that are hidden or stick out of the screen. */
const FIT = `(() => {
  const outside = [...document.querySelectorAll("nav a, nav button")].flatMap((el) => {
    const box = el.getBoundingClientRect()
    const shown = box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== "hidden"
    return shown && box.left >= 0 && box.right <= innerWidth ? [] : [(el.textContent || "").trim()]
  })
  // The innermost elements that reach past the right edge, to name in a failure.
  // (or whose content, a long word say, overflows them past it)
  const past = [...document.querySelectorAll("body *")].filter((el) =>
    el.getBoundingClientRect().right > innerWidth + 0.5 ||
    (el.scrollWidth > el.clientWidth + 1 && el.getBoundingClientRect().left + el.scrollWidth > innerWidth + 0.5 && getComputedStyle(el).overflowX === "visible"))
  const wide = past.filter((el) => !past.some((other) => other !== el && el.contains(other))).slice(0, 5)
    .map((el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : "") +
      " (right edge " + Math.round(el.getBoundingClientRect().right) + ")")
  return { scrollWidth: document.documentElement.scrollWidth, innerWidth, outside, wide }
})()`

/** At phone width: no sideways scrolling of the document, and every navigation link on screen. */
export const fitsPhone = (page: Page, where: string) =>
  Effect.gen(function*() {
    const fit = Schema.decodeUnknownSync(Fit)(yield* ui(() => page.evaluate(FIT)))
    expect(fit.scrollWidth, `${where} scrolls sideways at ${fit.innerWidth} px; past the edge: ${fit.wide.join(", ")}`)
      .toBeLessThanOrEqual(fit.innerWidth)
    expect(fit.outside, `${where}: navigation off screen`).toEqual([])
  })
