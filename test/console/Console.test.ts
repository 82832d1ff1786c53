/**
 * The web console in a real browser: Debian's Chromium driven by
 * playwright-core (no browser download), against a node on a real port, on
 * each profile. A user signs in with the keyboard, creates a key (shown once)
 * and records with it through the API, finds the memory in the console,
 * searches, edits and retires it, asks the playground, and revokes the key.
 * With CONSOLE_SCREENSHOTS=<dir> a screenshot of each page is saved there
 * (`npm run screenshots` writes docs/screenshots/).
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { expect } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { call, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path))
const SHOTS = process.env.CONSOLE_SCREENSHOTS

const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : "http://127.0.0.1")

const browser = Effect.acquireRelease(
  Effect.promise((): Promise<Browser> => {
    if (CHROMIUM === undefined) throw new Error("Chromium is not installed (apt-get install chromium); .ci/run installs it")
    return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
  }),
  (b) => Effect.promise(() => b.close())
)

/** A page that records every console error and uncaught exception, so the test can require none. */
const openPage = (b: Browser, width: number) =>
  Effect.promise(async () => {
    const context = await b.newContext({ viewport: { width, height: 900 } })
    const page = await context.newPage()
    const errors: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text())
    })
    page.on("pageerror", (error) => errors.push(error.message))
    return { page, errors }
  })

const shot = (page: Page, name: string) =>
  Effect.promise(async () => {
    if (SHOTS === undefined) return
    mkdirSync(SHOTS, { recursive: true })
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
  })

const ui = <A>(run: () => Promise<A>) => Effect.promise(run)

eachProfile("web console", (it) => {
  it.scoped("sign in, create a key, see a recorded memory, search, edit, retire, ask the playground, revoke the key", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const owner = yield* signup("console")
      const spaceId = `console-${Date.now()}`
      expect((yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: spaceId, name: "Console test" } })).status).toBe(201)
      const b = yield* browser
      const { errors, page } = yield* openPage(b, 1280)

      // The page and its assets come from Engram itself.
      const served = yield* ui(() => fetch(`${base}/`))
      expect(served.status).toBe(200)
      expect(served.headers.get("content-type")).toContain("text/html")
      expect((yield* ui(() => fetch(`${base}/console/app.js`))).status).toBe(200)

      // Sign in with the keyboard alone.
      yield* ui(() => page.goto(`${base}/`))
      yield* ui(() => page.getByLabel("Email").waitFor())
      yield* shot(page, "sign-in")
      yield* ui(() => page.getByLabel("Email").focus())
      yield* ui(() => page.keyboard.type(owner.email))
      yield* ui(() => page.keyboard.press("Tab"))
      yield* ui(() => page.keyboard.type(owner.password))
      yield* ui(() => page.keyboard.press("Enter"))
      yield* ui(() => page.getByRole("heading", { name: "Spaces" }).waitFor())
      expect(yield* ui(() => page.getByRole("link", { name: spaceId }).count())).toBe(1)
      yield* shot(page, "spaces")

      // A key: its secret is shown once, and it works on the API.
      yield* ui(() => page.getByRole("link", { name: "API keys", exact: true }).click())
      yield* ui(() => page.getByRole("heading", { name: "API keys" }).waitFor())
      yield* ui(() => page.getByLabel("Name").fill("console key"))
      yield* ui(() => page.getByRole("button", { name: "Create key" }).click())
      const secret = yield* ui(() => page.locator("#raw-key").inputValue())
      expect(secret).toMatch(/^svc_live_/)
      yield* shot(page, "api-keys")
      const recorded = yield* call("POST", "/v1/record", {
        token: secret,
        json: { space_id: spaceId, content: "Priya adopted a grey cat named Miso in March 2024." }
      })
      expect(recorded.status, recorded.text).toBe(200)
      for (const content of ["Priya works as a nurse in Leeds.", "Tom plays the cello on Sundays."]) {
        expect((yield* call("POST", "/v1/record", { token: secret, json: { space_id: spaceId, content } })).status).toBe(200)
      }

      // The memory appears in the space's page.
      yield* ui(() => page.getByRole("button", { name: "Done" }).click())
      yield* ui(() => page.getByRole("link", { name: "Spaces", exact: true }).click())
      yield* ui(() => page.getByRole("heading", { name: "Spaces" }).waitFor())
      yield* ui(() => page.getByRole("link", { name: spaceId }).click())
      yield* ui(() => page.getByRole("heading", { name: `Space ${spaceId}` }).waitFor())
      const cell = page.getByRole("cell", { name: /grey cat named Miso/ })
      yield* ui(() => cell.waitFor())
      yield* shot(page, "memories")

      // Search calls retrieve: the cat memory ranks first, with a score.
      yield* ui(() => page.getByLabel("Search", { exact: true }).fill("What pet does Priya have?"))
      yield* ui(() => page.getByRole("button", { name: "Search" }).click())
      yield* ui(() => page.getByText(/memories recalled, best first/).waitFor())
      const firstRow = page.locator("table.memories tbody tr").first()
      expect(yield* ui(() => firstRow.innerText())).toContain("Miso")
      expect(yield* ui(() => firstRow.locator("td").nth(3).innerText())).toMatch(/^0\.\d{3}$|^1\.000$/)

      // Open it, edit it, and see the edit in its history and through the API.
      yield* ui(() => firstRow.getByRole("link", { name: /Open memory/ }).click())
      yield* ui(() => page.getByRole("heading", { name: /^Memory / }).waitFor())
      const memoryId = (yield* ui(() => page.getByRole("heading", { name: /^Memory / }).innerText())).replace("Memory ", "")
      yield* ui(() => page.getByLabel("Text").fill("Priya adopted a grey cat named Miso in March 2024; Miso is shy."))
      yield* ui(() => page.getByRole("button", { name: "Save" }).click())
      // The history names the edit and shows what the memory said before it.
      yield* ui(() => page.locator(".history li", { hasText: "edited" }).waitFor())
      expect(yield* ui(() => page.locator(".history li", { hasText: "edited" }).innerText())).toContain("in March 2024. (active)")
      yield* shot(page, "memory")
      const afterEdit = yield* call("GET", `/v1/spaces/${spaceId}/memories/${memoryId}`, { token: owner.token })
      expect(afterEdit.body.text).toBe("Priya adopted a grey cat named Miso in March 2024; Miso is shy.")

      // Retire it: recall no longer returns it, and it is listed under the retired state.
      yield* ui(() => page.getByRole("button", { name: "Retire" }).click())
      yield* ui(() => page.getByRole("button", { name: "Restore" }).waitFor())
      expect((yield* call("GET", `/v1/spaces/${spaceId}/memories/${memoryId}`, { token: owner.token })).body.state).toBe("retired")
      const recall = yield* call("POST", "/v1/retrieve", { token: owner.token, json: { space_id: spaceId, query: "Priya cat Miso" } })
      expect(recall.body.results.map((r: { memory_id: string }) => r.memory_id)).not.toContain(memoryId)

      // The playground: ranked memories with scores, and the receipt's reasons for the rest.
      yield* ui(() => page.getByRole("link", { name: "Playground", exact: true }).click())
      yield* ui(() => page.getByRole("heading", { name: "Retrieve playground" }).waitFor())
      yield* ui(() => page.getByLabel("Space", { exact: true }).selectOption(spaceId))
      yield* ui(() => page.getByLabel("Query").fill("Where does Priya work?"))
      yield* ui(() => page.getByRole("button", { name: "Retrieve" }).click())
      yield* ui(() => page.getByRole("heading", { name: "Ranked memories" }).waitFor())
      expect(yield* ui(() => page.locator("ol.ranked li").first().innerText())).toContain("nurse in Leeds")
      expect(yield* ui(() => page.getByText(/^Receipt req_|^Receipt /).count())).toBe(1)
      yield* shot(page, "playground")

      // Revoking the key in the console stops it on the API at once.
      yield* ui(() => page.getByRole("link", { name: "API keys", exact: true }).click())
      yield* ui(() => page.getByRole("heading", { name: "API keys" }).waitFor())
      page.once("dialog", (dialog) => void dialog.accept())
      yield* ui(() => page.getByRole("button", { name: "Revoke key console key" }).click())
      // A revoked key leaves the list (the API lists active and expired keys).
      yield* ui(() => page.locator("tr", { hasText: "console key" }).waitFor({ state: "detached" }))
      expect((yield* call("POST", "/v1/record", { token: secret, json: { space_id: spaceId, content: "after revoke" } })).status).toBe(401)

      // Phone width: the spaces page fits without sideways scrolling.
      const phone = yield* openPage(b, 390)
      yield* ui(() => phone.page.goto(`${base}/`))
      yield* ui(() => phone.page.evaluate(`sessionStorage.setItem("engram.session", ${JSON.stringify(owner.token)})`))
      yield* ui(() => phone.page.goto(`${base}/#/spaces`))
      yield* ui(() => phone.page.reload())
      yield* ui(() => phone.page.getByRole("heading", { name: "Spaces" }).waitFor())
      expect(yield* ui(() => phone.page.evaluate<number>("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(390)
      yield* shot(phone.page, "spaces-phone")

      expect(errors).toEqual([])
      expect(phone.errors).toEqual([])
    }), { timeout: 180_000 })
})
