import { api, bool, list, num, str, strings } from "../api.ts"
import { announce, confirmButton, field, formatDate, h, table, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"

/** The plan, this period's credits, and the plans to move to (checkout goes to the payment processor's page). */
const billingSection = (billing: unknown) => {
  const limit = Math.max(1, num(billing, "credits_limit"))
  return h("div", { id: "billing", class: "card" },
    h("p", {}, `${str(billing, "plan_name")} plan, $${num(billing, "price_per_month_usd")} a month` +
      (bool(billing, "has_subscription") ? (bool(billing, "cancel_at_period_end") ? " (ends at the next reset)" : " (subscribed)") : "")),
    h("p", {}, `${num(billing, "credits_used")} of ${num(billing, "credits_limit")} credits used; resets ${formatDate(str(billing, "credits_reset_at"))}`),
    h("progress", { max: limit, value: Math.min(limit, num(billing, "credits_used")), "aria-label": "Credits used this period" }),
    table("Plans", ["Plan", "Price a month", "Credits", "Spaces", ""], list(billing, "available_plans").map((plan) => [
      str(plan, "name"),
      `$${num(plan, "price_per_month_usd")}`,
      String(num(plan, "credits")),
      String(num(plan, "max_spaces")),
      str(plan, "plan_id") === str(billing, "plan_id")
        ? "current"
        : h("button", {
          type: "button",
          onclick: () =>
            api("POST", "/v1/billing/checkout", { plan_id: str(plan, "plan_id") }).then((session) => {
              location.assign(str(session, "checkout_url"))
            }, failed)
        }, `Choose ${str(plan, "name")}`)
    ])))
}

/** The organization: its members, pending invitations (the link shown to the inviter) and usage over the last 30 days. */
export const organizationPage = async (refresh: () => void) => {
  const from = new Date(Date.now() - 30 * 86_400_000).toISOString()
  const [members, invitations, usage, clients, billing] = await Promise.all([
    api("GET", "/v1/orgs/me/members"),
    api("GET", "/v1/orgs/me/invitations").catch(() => null),
    api("GET", `/v1/usage?${new URLSearchParams({ from, granularity: "day" })}`).catch(() => null),
    api("GET", "/v1/oauth/grants"),
    api("GET", "/v1/billing").catch(() => null)
  ])
  const invite = h("form", { class: "inline", "aria-label": "Invite someone" },
    field("Email to invite", h("input", { name: "email", type: "email", required: true })),
    field("Role", h("select", { name: "role" }, h("option", { value: "member" }, "member"), h("option", { value: "admin" }, "admin"))),
    h("button", { type: "submit" }, "Invite"))
  const link = h("div", { "aria-live": "polite" })
  invite.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(invite instanceof HTMLFormElement)) return
    await api("POST", "/v1/orgs/me/invitations", { email: valueOf(invite, "email"), role: valueOf(invite, "role") }).then((sent) => {
      link.replaceChildren(h("p", { class: "card notice" }, "Send this link to the invitee: ", h("code", {}, str(sent, "invite_url"))))
      announce("Invitation created.")
    }, failed)
  })
  // One bar per day of the window, empty days included.
  const byDay = new Map(list(usage, "series").map((p) => [str(p, "start").slice(0, 10), num(p, "credits")]))
  const series = Array.from({ length: 30 }, (_, i) => {
    const day = new Date(Date.now() - (29 - i) * 86_400_000).toISOString().slice(0, 10)
    return { day, credits: byDay.get(day) ?? 0 }
  })
  const most = Math.max(1, ...series.map((p) => p.credits))
  return h("section", { "aria-labelledby": "org-title" },
    h("h1", { id: "org-title" }, "Organization"),
    h("h2", {}, "Members"),
    table(num(members, "total") === 1 ? "1 member" : `${num(members, "total")} members`, ["Email", "Role", "Since"], list(members, "items").map((m) =>
      [str(m, "email"), str(m, "role"), formatDate(str(m, "created_at"))])),
    h("h2", {}, "Invitations"),
    invite,
    link,
    invitations === null
      ? h("p", {}, "Only owners and admins see invitations.")
      : table(`${num(invitations, "total")} pending`, ["Email", "Role", "Expires", ""], list(invitations, "items").map((i) => [
        str(i, "email"), str(i, "role"), formatDate(str(i, "expires_at")),
        confirmButton("Withdraw", `Withdraw the invitation to ${str(i, "email")}?`, () =>
          api("DELETE", `/v1/orgs/me/invitations/${encodeURIComponent(str(i, "id"))}`).then(refresh, failed))
      ])),
    h("h2", {}, "Connected MCP clients"),
    table(`${num(clients, "total")} connected`, ["Client", "Signed in by", "Access", "Spaces", "Last used", ""], list(clients, "items").map((c) => {
      const name = str(c, "client_name") || str(c, "client_id")
      const spaces = strings(c, "spaces")
      return [
        name,
        str(c, "email"),
        str(c, "scope").includes("memories:write") ? "read and write" : "read",
        typeof c === "object" && c !== null && "spaces" in c && Array.isArray(c.spaces) ? spaces.join(", ") : "all spaces",
        formatDate(str(c, "last_used_at")),
        confirmButton("Revoke", `Revoke ${name}? It must sign in again to reach your memories.`, () =>
          api("DELETE", `/v1/oauth/grants/${encodeURIComponent(str(c, "id"))}`).then(() => {
            announce(`${name} revoked.`)
            refresh()
          }, failed), `Revoke ${name}`)
      ]
    }), { id: "connected-clients" }),
    h("h2", {}, "Plan and billing"),
    billing === null ? h("p", {}, "Billing needs an owner's or admin's session.") : billingSection(billing),
    h("h2", {}, "Usage, last 30 days"),
    usage === null
      ? h("p", {}, "Usage needs an owner's or admin's session.")
      : h("figure", {},
        h("div", { class: "bars", role: "img", "aria-label": `Credits per day; ${num(usage, "credits_used")} in all` },
          series.map((p) => {
            // Set through the CSSOM: the console's CSP allows no inline style attributes.
            const bar = h("div", { title: `${p.day}: ${p.credits} credits` })
            bar.style.height = `${Math.round((100 * p.credits) / most)}%`
            return bar
          })),
        h("figcaption", {}, `${num(usage, "credits_used")} credits used since ${formatDate(str(usage, "from"))}`)))
}
