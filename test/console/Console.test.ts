/**
 * The web console in a real browser: Debian's Chromium driven by
 * playwright-core (no browser download), against a node on a real port, on
 * each profile. A user signs in with the keyboard, creates a key (shown once)
 * and records with it through the API, filters by tag from the keyboard,
 * finds the memory, searches, edits and retires it, asks the playground, and
 * revokes the key; every section of a space and the organization; the notes
 * with the facts behind them; billing against a stand-in of Stripe's API; an
 * MCP client signing in through the browser. axe-core audits every page (no
 * serious or critical violation), every page fits a 390 px phone screen, and
 * any console error fails the test. With CONSOLE_SCREENSHOTS=<dir> a
 * screenshot of each page is saved there (`npm run screenshots` writes
 * docs/screenshots/).
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, expect } from "@effect/vitest"
import { describe, it } from "vitest"
import { Effect, Option, Redacted } from "effect"
import type { Page } from "playwright-core"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { call, signup } from "../support/Http.ts"
import { audit, baseUrl, browser, CHROMIUM, check, fitsPhone, openPage, shot, tabTo, ui } from "../support/Browser.ts"
import { MemoryProvider, REDIRECT } from "../support/McpOAuthProvider.ts"
import { STAND_IN_SECRET_KEY, STAND_IN_WEBHOOK_SECRET, StripeStandIn } from "../support/StripeStandIn.ts"
import { WebhookTransport } from "../../services/webhooks/Transport.ts"
import { eachProfile } from "../support/Suite.ts"

// Billing against the stand-in of Stripe's API (test/http/Billing.test.ts uses the same), on plans these tests cannot exhaust.
const PLANS = [
  { plan_id: "free", name: "Free", price_per_month_usd: 0, credits: 1_000_000_000, rate_limit_per_min: 1_000_000, max_spaces: 100_000 },
  { plan_id: "pro", name: "Pro", price_per_month_usd: 49, credits: 2_000_000_000, rate_limit_per_min: 1_000_000, max_spaces: 100_000, stripe_price_id: "price_pro" }
]
const plansPath = join(mkdtempSync(join(tmpdir(), "engram-console-")), "plans.json")
writeFileSync(plansPath, JSON.stringify({ default_plan: "free", plans: PLANS }))
const standIn = CHROMIUM === undefined ? undefined : await StripeStandIn.start(["price_pro"])
afterAll(() => standIn?.close())

/** Signs the page in with a session token (kept in the tab's sessionStorage, as the sign-in form does). */
const signedIn = (page: Page, base: string, token: string) =>
  Effect.gen(function*() {
    yield* ui(() => page.goto(`${base}/`))
    yield* ui(() => page.evaluate(`sessionStorage.setItem("engram.session", ${JSON.stringify(token)})`))
  })

/** Without Chromium the browser tests are reported as skipped, with the reason printed (`.ci/run` installs it and checks it is there). */
const NO_BROWSER = "web console browser tests skipped: Chromium is not installed (apt-get install chromium)"
if (CHROMIUM === undefined) {
  console.warn(`\n*** ${NO_BROWSER} ***\n`)
  describe("web console", () => {
    it.skip(NO_BROWSER, () => {})
  })
}

if (CHROMIUM !== undefined) eachProfile("web console", (it) => {
  it.scoped("the API reference at /docs renders from Engram alone: no request leaves for another host", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const b = yield* browser
      const { page } = yield* openPage(b, 1280)
      const elsewhere: Array<string> = []
      page.on("request", (request) => {
        if (!request.url().startsWith(base) && !request.url().startsWith("data:")) elsewhere.push(request.url())
      })
      yield* ui(() => page.goto(`${base}/docs`, { waitUntil: "networkidle" }))
      // The reference drew itself: the API's title and one of its routes are on the page.
      yield* ui(() => page.getByText("/v1/record/batch").first().waitFor({ timeout: 30_000 }))
      expect(yield* ui(() => page.title())).toBe("Engram")
      expect(elsewhere).toEqual([])
    }))

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
      yield* check(page, "sign-in")
      yield* ui(() => page.getByLabel("Email").focus())
      yield* ui(() => page.keyboard.type(owner.email))
      yield* ui(() => page.keyboard.press("Tab"))
      yield* ui(() => page.keyboard.type(owner.password))
      yield* ui(() => page.keyboard.press("Enter"))
      yield* ui(() => page.getByRole("heading", { name: "Spaces" }).waitFor())
      expect(yield* ui(() => page.getByRole("link", { name: spaceId }).count())).toBe(1)
      // One space is "1 space"; its name opens it as its id does.
      expect(yield* ui(() => page.locator("table caption").innerText())).toBe("1 space")
      expect(yield* ui(() => page.getByRole("link", { name: "Console test", exact: true }).getAttribute("href"))).toBe(`#/spaces/${spaceId}`)
      yield* check(page, "spaces")

      // A key: its secret is shown once, and it works on the API.
      yield* ui(() => page.getByRole("link", { name: "API keys", exact: true }).click())
      yield* ui(() => page.getByRole("heading", { name: "API keys" }).waitFor())
      yield* ui(() => page.getByLabel("Name").fill("console key"))
      yield* ui(() => page.getByRole("button", { name: "Create key" }).click())
      const secret = yield* ui(() => page.locator("#raw-key").inputValue())
      expect(secret).toMatch(/^svc_live_/)
      yield* check(page, "api-keys")
      // The notice closes when clicked, and never follows to another page.
      const status = page.locator("#status")
      expect(yield* ui(() => status.innerText())).not.toBe("")
      yield* ui(() => status.click())
      expect(yield* ui(() => status.innerText())).toBe("")
      const recorded = yield* call("POST", "/v1/record", {
        token: secret,
        json: { space_id: spaceId, content: "Priya adopted a grey cat named Miso in March 2024.", tags: ["pets"] }
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
      yield* check(page, "memories")

      // From the keyboard alone (focus is on the page's heading, every stop shows its focus): filter by tag.
      yield* tabTo(page, /^Tags$/)
      yield* ui(() => page.keyboard.type("pets, unused"))
      yield* tabTo(page, /^Search$/)
      yield* ui(() => page.keyboard.press("Enter"))
      yield* ui(() => page.locator("table.memories tbody tr").first().waitFor())
      yield* ui(() => page.getByRole("cell", { name: /nurse in Leeds/ }).waitFor({ state: "detached" }))
      const tagged = yield* ui(() => page.locator("table.memories tbody tr").allInnerTexts())
      expect(tagged.length).toBeGreaterThan(0)
      for (const row of tagged) expect(row).toMatch(/Miso[\s\S]*pets/)
      expect(page.url()).toContain("tags=pets")

      // Search calls retrieve: the cat memory ranks first, with a score.
      yield* ui(() => page.getByLabel("Search", { exact: true }).fill("What pet does Priya have?"))
      yield* ui(() => page.getByRole("button", { name: "Search" }).click())
      yield* ui(() => page.getByText(/^(1 memory|\d+ memories) recalled, best first$/).waitFor())
      const firstRow = page.locator("table.memories tbody tr").first()
      expect(yield* ui(() => firstRow.innerText())).toContain("Miso")
      expect(yield* ui(() => firstRow.locator("td.score-cell").innerText())).toMatch(/^0\.\d{3}$|^1\.000$/)

      // Open it, edit it, and see the edit in its history and through the API.
      yield* ui(() => firstRow.getByRole("link", { name: /Open memory/ }).click())
      yield* ui(() => page.getByRole("heading", { name: /^Memory / }).waitFor())
      // The opened memory is where the eye and the keyboard go: its heading focused, inside the window.
      expect(yield* ui(() => page.evaluate("document.activeElement && document.activeElement.id"))).toBe("memory-title")
      const box = yield* ui(() => page.locator("#memory-title").boundingBox())
      expect(box!.y).toBeGreaterThanOrEqual(0)
      expect(box!.y).toBeLessThan(page.viewportSize()!.height)
      const memoryId = (yield* ui(() => page.getByRole("heading", { name: /^Memory / }).innerText())).replace("Memory ", "")
      yield* ui(() => page.getByLabel("Text").fill("Priya adopted a grey cat named Miso in March 2024; Miso is shy."))
      yield* ui(() => page.getByRole("button", { name: "Save" }).click())
      // The history names the edit and shows what the memory said before it.
      yield* ui(() => page.locator(".history li", { hasText: "edited" }).waitFor())
      expect(yield* ui(() => page.locator(".history li", { hasText: "edited" }).innerText())).toContain("in March 2024. (active)")
      yield* check(page, "memory")
      const byId = `/v1/spaces/${spaceId}/memories?ids=${memoryId}&state=all&prefer_observations=false` as const
      const afterEdit = yield* call("GET", byId, { token: owner.token })
      expect(afterEdit.body.items[0].text).toBe("Priya adopted a grey cat named Miso in March 2024; Miso is shy.")

      // Retire it: recall no longer returns it, and it is listed under the retired state.
      yield* ui(() => page.getByRole("button", { name: "Retire" }).click())
      yield* ui(() => page.getByRole("button", { name: "Restore" }).waitFor())
      expect((yield* call("GET", byId, { token: owner.token })).body.items[0].state).toBe("retired")
      const recall = yield* call("POST", "/v1/retrieve", { token: owner.token, json: { space_id: spaceId, query: "Priya cat Miso" } })
      expect(recall.body.results.map((r: { memory_id: string }) => r.memory_id)).not.toContain(memoryId)

      // A written question is kept in state question: listed under that state, and made active from its page.
      const asked = yield* call("POST", "/v1/record", { token: secret, json: { space_id: spaceId, content: "What does Priya do on weekends?" } })
      const askedId: string = asked.body.memories[0].memory_id
      yield* ui(() => page.getByLabel("Search", { exact: true }).fill(""))
      yield* ui(() => page.getByLabel("Tags", { exact: true }).fill(""))
      yield* ui(() => page.getByLabel("State", { exact: true }).selectOption("question"))
      yield* ui(() => page.getByRole("button", { name: "Search" }).click())
      const questionRow = page.locator("table.memories tbody tr", { hasText: "What does Priya do on weekends?" })
      yield* ui(() => questionRow.waitFor())
      expect(yield* ui(() => page.locator("table.memories tbody tr").count())).toBe(1)
      yield* ui(() => questionRow.getByRole("link", { name: /Open memory/ }).click())
      yield* ui(() => page.getByRole("button", { name: "Make active" }).click())
      yield* ui(() => page.getByRole("button", { name: "Retire" }).waitFor())
      const promoted = yield* call("GET", `/v1/spaces/${spaceId}/memories?ids=${askedId}&state=all`, { token: owner.token })
      expect(promoted.body.items[0].state).toBe("active")

      // The playground: ranked memories with scores, and the receipt's reasons for the rest.
      yield* ui(() => page.getByRole("link", { name: "Playground", exact: true }).click())
      yield* ui(() => page.getByRole("heading", { name: "Retrieve playground" }).waitFor())
      yield* ui(() => page.getByLabel("Space", { exact: true }).selectOption(spaceId))
      yield* ui(() => page.getByLabel("Query").fill("Where does Priya work?"))
      yield* ui(() => page.getByRole("button", { name: "Retrieve" }).click())
      yield* ui(() => page.getByRole("heading", { name: "Ranked memories" }).waitFor())
      expect(yield* ui(() => page.locator("ol.ranked li").first().innerText())).toContain("nurse in Leeds")
      expect(yield* ui(() => page.getByText(/^Receipt req_|^Receipt /).count())).toBe(1)
      yield* check(page, "playground")

      // Revoking the key in the console stops it on the API at once.
      yield* ui(() => page.getByRole("link", { name: "API keys", exact: true }).click())
      yield* ui(() => page.getByRole("heading", { name: "API keys" }).waitFor())
      page.once("dialog", (dialog) => void dialog.accept())
      yield* ui(() => page.getByRole("button", { name: "Revoke key console key" }).click())
      // A revoked key leaves the list (the API lists active and expired keys).
      yield* ui(() => page.locator("tr", { hasText: "console key" }).waitFor({ state: "detached" }))
      expect((yield* call("POST", "/v1/record", { token: secret, json: { space_id: spaceId, content: "after revoke" } })).status).toBe(401)

      // Phone width: the spaces page fits without sideways scrolling (the second test walks every page).
      const phone = yield* openPage(b, 390, 844)
      yield* signedIn(phone.page, base, owner.token)
      yield* ui(() => phone.page.goto(`${base}/#/spaces`))
      yield* ui(() => phone.page.reload())
      yield* ui(() => phone.page.getByRole("heading", { name: "Spaces" }).waitFor())
      yield* fitsPhone(phone.page, "spaces")
      yield* check(phone.page, "spaces-phone")

      expect(errors).toEqual([])
      expect(phone.errors).toEqual([])
    }), { timeout: 180_000 })

  it.scoped("every section of a space and the organization: upload and watch the job, the graph drawn, rules, extraction, members, exports, webhooks, models, notes; every page at phone width", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const owner = yield* signup("sections")
      const spaceId = `sections-${Date.now()}`
      expect((yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: spaceId } })).status).toBe(201)
      for (const content of ["Priya and Tom met Ana in Lisbon.", "Priya and Tom hiked in Porto with Ana.", "Tom visited Lisbon with Priya."]) {
        expect((yield* call("POST", "/v1/record", { token: owner.token, json: { space_id: spaceId, content } })).status).toBe(200)
      }
      // Two related facts of one subject, which consolidation writes into a note (docs/consolidation.md).
      const facts: Array<string> = []
      for (const [content, timestamp] of [
        ["Zara: I signed up for a pottery class at the Riverside studio on Mondays.", "2024-03-04T18:00:00Z"],
        ["Zara: My pottery teacher at the Riverside studio says my bowls are getting better.", "2024-04-15T18:00:00Z"]
      ] as const) {
        const wrote = yield* call("POST", "/v1/record", { token: owner.token, json: { space_id: spaceId, content, timestamp } })
        expect(wrote.status, wrote.text).toBe(200)
        facts.push(wrote.body.memories[0].memory_id)
      }
      const b = yield* browser
      const { errors, page } = yield* openPage(b, 1280)
      yield* signedIn(page, base, owner.token)
      const open = (section: string, heading: string) =>
        Effect.gen(function*() {
          yield* ui(() => page.goto(`${base}/#/spaces/${spaceId}${section ? `/${section}` : ""}`))
          yield* ui(() => page.getByRole("heading", { name: heading, exact: true }).waitFor())
        })

      // Upload a document: the upload's progress bar fills, then the job is followed until it completes.
      yield* open("documents", "Documents")
      yield* ui(() => page.getByLabel("Files", { exact: true }).setInputFiles({
        name: "trip.md",
        mimeType: "text/markdown",
        buffer: Buffer.from("# Trip\n\nAna booked the ferry to Madeira for the whole team.\n")
      }))
      yield* ui(() => page.getByRole("button", { name: "Upload" }).click())
      yield* ui(() => page.locator("#document-jobs li[data-status=completed]").waitFor({ timeout: 60_000 }).catch(async (e) => { throw new Error(`${e}: jobs ${await page.locator("#document-jobs").innerText()} status ${await page.locator("#status").innerText()}`) }))
      expect(yield* ui(() => page.getByLabel("Upload progress", { exact: true }).evaluate((bar) => "value" in bar && "max" in bar && bar.value === bar.max))).toBe(true)
      yield* ui(() => page.locator("#documents").getByRole("cell", { name: "trip.md", exact: true }).waitFor())
      // The five recorded writes above are documents too, each with nothing of its own to show: listed only when asked.
      expect(yield* ui(() => page.locator("#documents tbody tr").count())).toBe(1)
      expect(yield* ui(() => page.locator("#documents caption").innerText())).toBe("1 document uploaded or named")
      yield* ui(() => page.getByLabel("Also list the document each recorded write makes").check())
      yield* ui(() => page.locator("#documents caption", { hasNotText: "uploaded" }).waitFor())
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/documents`, { token: owner.token })
      expect(yield* ui(() => page.locator("#documents caption").innerText())).toBe(`${listed.body.total} documents`)
      expect(listed.body.total).toBeGreaterThanOrEqual(6)
      expect(yield* ui(() => page.locator("#documents tbody tr").count())).toBe(listed.body.total)
      yield* check(page, "documents")

      // The graph is drawn: a node per entity, lines between those named together.
      yield* open("graph", "Entity graph")
      yield* ui(() => page.locator("svg#graph g.node").first().waitFor())
      const drawn = yield* ui(() => page.locator("svg#graph g.node").evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-entity"))))
      expect(drawn).toEqual(expect.arrayContaining(["Priya", "Tom", "Lisbon"]))
      expect(yield* ui(() => page.locator("svg#graph line.edge").count())).toBeGreaterThan(0)
      // A node opens its entity (from the keyboard too): the memories that name it.
      yield* ui(() => page.locator("svg#graph g.node[data-entity=Lisbon]").focus())
      yield* ui(() => page.keyboard.press("Enter"))
      yield* ui(() => page.locator("#entity-detail h3", { hasText: "Lisbon" }).waitFor())
      expect(yield* ui(() => page.locator("#entity-detail li").allInnerTexts())).toEqual(expect.arrayContaining([expect.stringContaining("Lisbon")]))
      yield* check(page, "graph")

      // Rules: add one, and it is stored.
      yield* open("rules", "Rules")
      yield* ui(() => page.getByLabel("Rule name", { exact: true }).fill("No emails"))
      yield* ui(() => page.getByLabel("Detector", { exact: true }).selectOption("email"))
      yield* ui(() => page.getByLabel("Action", { exact: true }).selectOption("block"))
      yield* ui(() => page.getByRole("button", { name: "Add rule" }).click())
      yield* ui(() => page.locator("#rules").getByRole("cell", { name: "No emails", exact: true }).waitFor())
      const rules = yield* call("GET", `/v1/spaces/${spaceId}/rules`, { token: owner.token })
      expect(rules.body.items.map((r: { name: string; action: string }) => [r.name, r.action])).toContainEqual(["No emails", "block"])
      yield* check(page, "rules")

      // Extraction settings: saved for the next write.
      yield* open("extraction", "Extraction settings")
      yield* ui(() => page.getByLabel("Mode", { exact: true }).selectOption("verbatim"))
      yield* ui(() => page.getByRole("button", { name: "Save settings" }).click())
      yield* ui(() => page.getByText(/^Last changed/).waitFor())
      expect((yield* call("GET", `/v1/spaces/${spaceId}/extraction-settings`, { token: owner.token })).body.mode).toBe("verbatim")
      yield* audit(page, "extraction")

      // Members: the owning organization is listed.
      yield* open("members", "Members")
      yield* ui(() => page.getByRole("cell", { name: "owner", exact: true }).waitFor())
      yield* audit(page, "members")

      // Exports: start one, wait for it, download the file.
      yield* open("exports", "Exports")
      yield* ui(() => page.getByRole("button", { name: "Export the space" }).click())
      for (let i = 0; i < 60; i++) {
        yield* ui(() => page.getByRole("button", { name: "Refresh" }).click())
        yield* ui(() => page.locator("#exports tbody tr").first().waitFor())
        if ((yield* ui(() => page.getByRole("button", { name: "Download" }).count())) > 0) break
        yield* Effect.sleep("500 millis")
      }
      const [download] = yield* ui(() => Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download" }).click()]))
      const file = yield* ui(async () => {
        const path = await download!.path()
        const { readFileSync } = await import("node:fs")
        return readFileSync(path, "utf8")
      })
      expect(file.split("\n")[0]).toContain("\"kind\":\"header\"")
      expect(file).toContain("Madeira")
      yield* check(page, "exports")

      // Webhooks and memory models: created from the console, then listed.
      yield* open("webhooks", "Webhooks")
      // The node under test may send to this machine; nothing listens on port 9, so deliveries fail and are listed.
      yield* ui(() => page.getByLabel("URL", { exact: true }).fill("https://127.0.0.1:9/engram"))
      yield* ui(() => page.getByRole("button", { name: "Add webhook" }).click())
      yield* ui(() => page.getByText(/Signing secret \(shown once\)/).waitFor({ timeout: 10_000 }).catch(async (e) => {
        throw new Error(`${e}: status ${await page.locator("#status").innerText()}`)
      }))
      expect((yield* call("GET", `/v1/spaces/${spaceId}/webhooks`, { token: owner.token })).body.items).toHaveLength(1)
      yield* audit(page, "webhooks")
      yield* open("models", "Memory models")
      yield* ui(() => page.getByLabel("Model name", { exact: true }).fill("Travel"))
      yield* ui(() => page.getByLabel("Standing query", { exact: true }).fill("Where has the team travelled?"))
      yield* ui(() => page.getByRole("button", { name: "Create model" }).click())
      yield* ui(() => page.getByRole("heading", { name: "Travel" }).waitFor())
      yield* check(page, "models")

      // Notes: the note consolidation wrote, with the facts it was built from, each opening that memory.
      let note: { id: string; source_ids: Array<string> } | undefined
      for (let i = 0; i < 120 && note === undefined; i++) {
        const notes = yield* call("GET", `/v1/spaces/${spaceId}/memories?type=note`, { token: owner.token })
        note = notes.body.items.find((n: { source_ids: Array<string> }) => n.source_ids.includes(facts[0]!))
        if (note === undefined) yield* Effect.sleep("250 millis")
      }
      expect(note, "consolidation wrote no note from the two facts").toBeDefined()
      expect([...note!.source_ids].sort()).toEqual([...facts].sort())
      yield* open("notes", "Notes")
      const card = page.locator(`#notes article[data-memory-id="${note!.id}"]`)
      yield* ui(() => card.waitFor())
      expect(yield* ui(() => card.locator(".note-text").innerText())).toContain("pottery class at the Riverside studio")
      yield* ui(() => card.getByText("Built from 2 facts").click())
      yield* ui(() => card.locator("details[data-read=true]").waitFor())
      const sources = card.locator("details a")
      expect(yield* ui(() => sources.evaluateAll((links) => links.map((a) => a.getAttribute("data-source-id"))))).toEqual(note!.source_ids)
      expect((yield* ui(() => sources.allInnerTexts())).join(" ")).toMatch(/pottery class[\s\S]*bowls are getting better|bowls are getting better[\s\S]*pottery class/)
      yield* check(page, "notes")
      yield* ui(() => sources.first().click())
      yield* ui(() => page.getByRole("heading", { name: `Memory ${note!.source_ids[0]}` }).waitFor())
      expect(yield* ui(() => page.getByLabel("Text", { exact: true }).inputValue())).toContain("Zara")

      // The organization: members, an invitation with its link, usage drawn as a chart.
      yield* ui(() => page.goto(`${base}/#/organization`))
      yield* ui(() => page.getByRole("heading", { name: "Organization", exact: true }).waitFor())
      yield* ui(() => page.getByRole("cell", { name: owner.email }).waitFor())
      yield* ui(() => page.getByLabel("Email to invite", { exact: true }).fill(`invitee-${Date.now()}@example.test`))
      yield* ui(() => page.getByRole("button", { name: "Invite" }).click())
      const inviteLink = page.getByText("Send this link to the invitee:").locator("code")
      yield* ui(() => inviteLink.waitFor())
      expect(yield* ui(() => inviteLink.innerText())).toMatch(/^https?:\/\/\S+$/)
      expect(yield* ui(() => page.locator(".bars div").count())).toBeGreaterThan(0)
      // The plan and this period's credits, with the plans to move to.
      expect(yield* ui(() => page.locator("#billing").innerText())).toMatch(/plan, \$\d+ a month[\s\S]*credits used/)
      expect(yield* ui(() => page.locator("#billing tbody tr").count())).toBeGreaterThan(0)
      yield* audit(page, "organization")

      // Every page at phone width: nothing scrolls sideways, the navigation is on screen, axe finds nothing serious.
      const phone = yield* openPage(b, 390, 844)
      yield* ui(() => phone.page.goto(`${base}/#/signin`))
      yield* ui(() => phone.page.getByRole("heading", { name: "Sign in to Engram" }).waitFor())
      yield* fitsPhone(phone.page, "sign-in")
      yield* audit(phone.page, "sign-in at phone width")
      yield* signedIn(phone.page, base, owner.token)
      const space = `#/spaces/${encodeURIComponent(spaceId)}`
      const pages: ReadonlyArray<readonly [string, string | RegExp]> = [
        ["#/spaces", "Spaces"],
        [space, `Space ${spaceId}`],
        [`${space}?state=all&open=${encodeURIComponent(facts[0]!)}`, `Memory ${facts[0]}`],
        [`${space}/notes`, "Notes"],
        [`${space}/documents`, "Documents"],
        [`${space}/graph`, "Entity graph"],
        [`${space}/models`, "Memory models"],
        [`${space}/webhooks`, "Webhooks"],
        [`${space}/rules`, "Rules"],
        [`${space}/extraction`, "Extraction settings"],
        [`${space}/members`, "Members"],
        [`${space}/exports`, "Exports"],
        ["#/keys", "API keys"],
        [`#/playground/${encodeURIComponent(spaceId)}?q=Lisbon`, "Ranked memories"],
        ["#/organization", "Organization"]
      ]
      for (const [hash, heading] of pages) {
        yield* ui(() => phone.page.goto(`${base}/${hash}`))
        yield* ui(() => phone.page.getByRole("heading", { name: heading, exact: true }).waitFor())
        yield* fitsPhone(phone.page, hash)
        yield* audit(phone.page, `${hash} at phone width`)
      }
      yield* shot(phone.page, "organization-phone")
      // The navigation works at that width: a tap on a link of the top bar opens its page.
      yield* ui(() => phone.page.getByRole("link", { name: "API keys", exact: true }).click())
      yield* ui(() => phone.page.getByRole("heading", { name: "API keys" }).waitFor())

      expect(errors).toEqual([])
      expect(phone.errors).toEqual([])
    }), { timeout: 300_000 })

  it.scoped("an MCP client signs in through the browser: the SDK's OAuth client, Engram's sign-in and consent pages in Chromium, then tools", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const owner = yield* signup("oauth-browser")
      const spaceId = `oauth-browser-${Date.now()}`
      const other = `oauth-other-${Date.now()}`
      for (const id of [spaceId, other]) expect((yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: id } })).status).toBe(201)
      const provider = new MemoryProvider()
      const first = new StreamableHTTPClientTransport(new URL("/mcp", base), { authProvider: provider })
      const refused = yield* ui(() => new Client({ name: "desktop-assistant", version: "1.0.0" }).connect(first).then(() => undefined, (e: unknown) => e))
      expect(refused).toBeInstanceOf(UnauthorizedError)

      const b = yield* browser
      const { errors, page } = yield* openPage(b, 1280)
      // The redirect to the client's loopback listener is caught here, as the desktop client would catch it.
      let redirected: URL | undefined
      yield* ui(() => page.route(`${REDIRECT.replace(/\/callback$/, "")}/**`, (route) => {
        redirected = new URL(route.request().url())
        return route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>Signed in</title><p>You can close this window.</p>" })
      }))
      yield* ui(() => page.goto(provider.authorizationUrl!.toString()))
      yield* ui(() => page.getByLabel("Email").waitFor())
      yield* audit(page, "oauth-sign-in")
      yield* ui(() => page.getByLabel("Email").fill(owner.email))
      yield* ui(() => page.getByLabel("Password").fill(owner.password))
      yield* ui(() => page.getByRole("button", { name: "Sign in" }).click())
      // Consent: the page names the client; the user keeps write access and picks one space.
      yield* ui(() => page.getByText("Test Assistant").first().waitFor())
      yield* ui(() => page.getByLabel("Only the spaces ticked below").check())
      yield* ui(() => page.getByLabel(spaceId, { exact: true }).check())
      yield* check(page, "oauth-consent")
      yield* ui(() => page.getByRole("button", { name: "Allow" }).click())
      yield* ui(() => page.getByText("You can close this window.").waitFor())
      expect(redirected?.searchParams.get("state")).toBe("state-xyz")
      const code = redirected?.searchParams.get("code")
      expect(code).toMatch(/.+/)

      yield* ui(() => first.finishAuth(code!))
      const client = new Client({ name: "desktop-assistant", version: "1.0.0" })
      yield* Effect.acquireRelease(
        ui(() => client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), { authProvider: provider }))),
        () => ui(() => client.close())
      )
      const tools = yield* ui(() => client.listTools())
      expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["record", "retrieve"]))
      const text = (result: unknown) => {
        const content = typeof result === "object" && result !== null && "content" in result && Array.isArray(result.content) ? result.content : []
        const first = content[0]
        return typeof first === "object" && first !== null && "text" in first && typeof first.text === "string" ? first.text : ""
      }
      const recorded = yield* ui(() => client.callTool({ name: "record", arguments: { space_id: spaceId, content: "Ines keeps bees on her roof in Porto." } }))
      expect(recorded.isError, text(recorded)).not.toBe(true)
      const recalled = yield* ui(() => client.callTool({ name: "retrieve", arguments: { space_id: spaceId, query: "Who keeps bees?" } }))
      expect(text(recalled)).toContain("bees")
      // The space not ticked on the consent page stays out of reach.
      const outside = yield* ui(() => client.callTool({ name: "retrieve", arguments: { space_id: other, query: "bees" } }))
      expect(outside.isError).toBe(true)

      // The console lists the connected client; revoking it there stops it at once.
      yield* ui(() => page.goto(`${base}/`))
      yield* ui(() => page.evaluate(`sessionStorage.setItem("engram.session", ${JSON.stringify(owner.token)})`))
      yield* ui(() => page.goto(`${base}/#/organization`))
      const row = page.locator("#connected-clients tbody tr", { hasText: "Test Assistant" })
      yield* ui(() => row.waitFor())
      expect(yield* ui(() => row.innerText())).toContain(spaceId)
      yield* check(page, "organization")
      page.once("dialog", (dialog) => void dialog.accept())
      yield* ui(() => row.getByRole("button", { name: "Revoke Test Assistant" }).click())
      yield* ui(() => row.waitFor({ state: "detached" }))
      const afterRevoke = yield* ui(() => client.callTool({ name: "retrieve", arguments: { space_id: spaceId, query: "bees" } }).then(() => "served", (e: unknown) => String(e)))
      // The SDK meets the 401, tries the refresh token, and the revoked grant refuses it.
      expect(afterRevoke).toMatch(/Unauthorized|401|InvalidGrant|invalid_grant|invalid_token/i)
      expect(errors).toEqual([])
    }), { timeout: 180_000 })

  it.scoped("billing: checkout at the processor, back with the plan, the customer portal, cancelling at the period's end after confirming", () =>
    Effect.gen(function*() {
      const stripe = standIn!
      const base = yield* baseUrl
      const owner = yield* signup("billing")
      const b = yield* browser
      const { errors, page } = yield* openPage(b, 1280)
      // The processor's pages (checkout, portal) are caught here, as the user's browser would reach them.
      const visited: Array<URL> = []
      for (const host of ["https://checkout.stripe.com/**", "https://billing.stripe.com/**"]) {
        yield* ui(() => page.route(host, (route) => {
          visited.push(new URL(route.request().url()))
          return route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><html lang=en><title>Stripe</title><p>The payment processor's page.</p>" })
        }))
      }
      yield* signedIn(page, base, owner.token)
      yield* ui(() => page.goto(`${base}/#/organization`))
      const billing = page.locator("#billing")
      yield* ui(() => billing.getByText("Free plan, $0 a month").waitFor())
      // No subscription yet: nothing to manage or cancel.
      expect(yield* ui(() => billing.getByRole("button", { name: "Open the billing portal" }).count())).toBe(0)

      // Choose the paid plan: checkout opens the processor's page; the customer pays there.
      yield* ui(() => billing.getByRole("button", { name: "Choose Pro" }).click())
      yield* ui(() => page.waitForURL(/^https:\/\/checkout\.stripe\.com\//))
      const sessionId = visited.find((url) => url.pathname.startsWith("/c/pay/"))!.pathname.split("/").at(-1)!
      for (const event of stripe.complete(sessionId, new Date()).events) {
        const delivered = yield* call("POST", "/v1/billing/webhook", { raw: event.payload, headers: { "content-type": "application/json", "stripe-signature": event.signature } })
        expect(delivered.status, delivered.text).toBe(200)
      }
      const subscriptionId = stripe.session(sessionId)!.subscription!
      // Back from checkout (its success page): the console says so and shows the plan.
      yield* ui(() => page.goto(`${base}/?checkout=success&session_id=${sessionId}`))
      yield* ui(() => page.getByRole("heading", { name: "Organization", exact: true }).waitFor())
      expect(yield* ui(() => page.locator("#status").innerText())).toContain("Payment received")
      yield* ui(() => billing.getByText("Pro plan, $49 a month (subscribed)").waitFor())
      // While subscribed, plans change in the portal.
      expect(yield* ui(() => billing.getByRole("button", { name: /^Choose|^Switch/ }).count())).toBe(0)
      yield* check(page, "billing")
      // That notice goes by itself after a few seconds; an error stays until clicked or the page changes.
      yield* ui(() => page.locator("#status:empty").waitFor({ state: "attached", timeout: 10_000 }))
      const before = errors.length
      yield* ui(() => page.goto(`${base}/#/spaces/no-such-space`))
      yield* ui(() => page.locator("#status.error").waitFor())
      yield* ui(() => page.waitForTimeout(2_000))
      expect(yield* ui(() => page.locator("#status").innerText())).not.toBe("")
      yield* ui(() => page.goto(`${base}/#/organization`))
      yield* ui(() => billing.getByText("Pro plan, $49 a month (subscribed)").waitFor())
      expect(yield* ui(() => page.locator("#status").innerText())).toBe("")
      // The one error the browser logged meanwhile is the missing space's, asked for on purpose.
      expect(errors.splice(before)).toEqual(["Failed to load resource: the server responded with a status of 404 (Not Found)"])

      // The customer portal opens at the processor.
      yield* ui(() => billing.getByRole("button", { name: "Open the billing portal" }).click())
      yield* ui(() => page.waitForURL(/^https:\/\/billing\.stripe\.com\//))
      yield* ui(() => page.goto(`${base}/#/organization`))
      yield* ui(() => billing.getByText("Pro plan, $49 a month (subscribed)").waitFor())

      // Cancel, from the keyboard: the confirm step first declined (nothing changes), then accepted.
      const questions: Array<string> = []
      page.once("dialog", (dialog) => {
        questions.push(dialog.message())
        void dialog.dismiss()
      })
      yield* tabTo(page, /^Cancel subscription$/)
      yield* ui(() => page.keyboard.press("Enter"))
      yield* Effect.sleep("300 millis")
      expect(questions[0]).toMatch(/^Cancel the Pro subscription\? It stays until .+ resume it in the billing portal/)
      expect(stripe.subscription(subscriptionId)!.cancel_at_period_end).toBe(false)
      expect((yield* call("GET", "/v1/billing", { token: owner.token })).body.cancel_at_period_end).toBe(false)
      page.once("dialog", (dialog) => void dialog.accept())
      yield* ui(() => page.keyboard.press("Enter"))
      yield* ui(() => page.locator("#subscription-ending").waitFor())
      expect(stripe.subscription(subscriptionId)!.cancel_at_period_end).toBe(true)
      const after = (yield* call("GET", "/v1/billing", { token: owner.token })).body
      expect(after).toMatchObject({ plan_id: "pro", has_subscription: true, cancel_at_period_end: true, scheduled_plan_id: "free" })
      expect(yield* ui(() => billing.innerText())).toMatch(/\(cancelled: ends at the next reset\)[\s\S]*then the Free plan/)
      // Cancelled once; resuming is the portal's, which stays offered.
      expect(yield* ui(() => billing.getByRole("button", { name: "Cancel subscription" }).count())).toBe(0)
      expect(yield* ui(() => billing.getByRole("button", { name: "Open the billing portal" }).count())).toBe(1)
      yield* check(page, "billing-cancelled")
      expect(errors).toEqual([])
    }), { timeout: 180_000 })
}, {
  plansConfig: Option.some(plansPath),
  stripe: standIn === undefined ? Option.none() : Option.some({
    secretKey: Redacted.make(STAND_IN_SECRET_KEY),
    webhookSecret: Redacted.make(STAND_IN_WEBHOOK_SECRET),
    apiUrl: Option.some(new URL(standIn.url))
  })
}, { transport: WebhookTransport.make({ allowPrivate: true }) })
