import type { WireAnswer } from "../../../src/client/Wire.ts"
import { type Answer, api, bool, choice, has, list, num, str, strings } from "../api.ts"
import { announce, confirmButton, field, formatDate, h, table, valueOf } from "../dom.ts"
import { failed } from "./failed.ts"

/** Opens the payment processor's customer portal (invoices, payment method, plan changes, resuming a cancelled subscription). */
const openPortal = () =>
  api("POST", "/v1/billing/portal").then((portal) => {
    location.assign(str(portal, "portal_url"))
  }, failed)

/**
 * The plan, this period's credits, and what the role may do: move to a free
 * plan, check out a paid one (the payment processor's page), open the
 * customer portal, and (the owner) cancel at the period's end.
 */
const billingSection = (billing: Answer<WireAnswer<"GET", "/v1/billing">>, role: string, refresh: () => void) => {
  const limit = Math.max(1, num(billing, "credits_limit"))
  const manages = role === "owner" || role === "admin"
  const subscribed = bool(billing, "has_subscription")
  const ending = bool(billing, "cancel_at_period_end")
  const resetAt = formatDate(str(billing, "credits_reset_at"))
  const plans = list(billing, "available_plans")
  const planName = (planId: string) => str(plans.find((p) => str(p, "plan_id") === planId), "name") || planId
  const scheduled = str(billing, "scheduled_plan_id")
  const choose = (plan: (typeof plans)[number]) => {
    const name = str(plan, "name")
    if (str(plan, "plan_id") === str(billing, "plan_id")) return "current"
    if (!manages) return ""
    // While a subscription runs, plans change in the portal (checkout and upgrade answer 409 then).
    if (subscribed) return "through the billing portal"
    return num(plan, "price_per_month_usd") === 0
      ? h("button", {
        type: "button",
        onclick: () =>
          api("POST", "/v1/billing/upgrade", { plan_id: str(plan, "plan_id") }).then(() => {
            announce(`Moved to the ${name} plan.`)
            refresh()
          }, failed)
      }, `Switch to ${name}`)
      : h("button", {
        type: "button",
        onclick: () =>
          api("POST", "/v1/billing/checkout", { plan_id: str(plan, "plan_id") }).then((session) => {
            location.assign(str(session, "checkout_url"))
          }, failed)
      }, `Choose ${name}`)
  }
  const cancel = confirmButton(
    "Cancel subscription",
    `Cancel the ${str(billing, "plan_name")} subscription? It stays until ${resetAt}, then the organization moves to the default plan. ` +
      "You can resume it in the billing portal until then.",
    () =>
      api("POST", "/v1/billing/cancel").then((cancelled) => {
        announce(str(cancelled, "message") || "The subscription ends with this period.")
        refresh()
      }, failed)
  )
  return h("div", { id: "billing", class: "card" },
    h("p", {}, `${str(billing, "plan_name")} plan, $${num(billing, "price_per_month_usd")} a month` +
      (subscribed ? (ending ? " (cancelled: ends at the next reset)" : " (subscribed)") : "")),
    h("p", {}, `${num(billing, "credits_used")} of ${num(billing, "credits_limit")} credits used; resets ${resetAt}`),
    h("progress", { max: limit, value: Math.min(limit, num(billing, "credits_used")), "aria-label": "Credits used this period" }),
    scheduled && !ending ? h("p", {}, `Moves to the ${planName(scheduled)} plan on ${resetAt}.`) : null,
    ending
      ? h("p", { id: "subscription-ending", class: "notice" },
        `The subscription ends on ${resetAt}: the plan and its credits stay until then, then the ${planName(scheduled) || "default"} plan. ` +
          "To keep it, resume it in the billing portal before then.")
      : null,
    subscribed && manages
      ? h("p", { class: "actions" },
        h("button", { type: "button", onclick: () => void openPortal() }, "Open the billing portal"),
        role === "owner" && !ending ? [" ", cancel] : null,
        role !== "owner" && !ending ? h("span", { class: "hint" }, " Only the owner can cancel.") : null)
      : null,
    table("Plans", ["Plan", "Price a month", "Credits", "Spaces", ""], plans.map((plan) => [
      str(plan, "name"),
      `$${num(plan, "price_per_month_usd")}`,
      String(num(plan, "credits")),
      String(num(plan, "max_spaces")),
      choose(plan)
    ])))
}

/** The organization: its members, pending invitations (the link shown to the inviter) and usage over the last 30 days. */
export const organizationPage = async (refresh: () => void) => {
  const from = new Date(Date.now() - 30 * 86_400_000).toISOString()
  const [me, members, invitations, usage, clients, billing] = await Promise.all([
    api("GET", "/v1/orgs/me"),
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
    await api("POST", "/v1/orgs/me/invitations", { email: valueOf(invite, "email"), role: choice(valueOf(invite, "role"), ["member", "admin"]) }).then((sent) => {
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
        has(c, "spaces") ? spaces.join(", ") : "all spaces",
        formatDate(str(c, "last_used_at")),
        confirmButton("Revoke", `Revoke ${name}? It must sign in again to reach your memories.`, () =>
          api("DELETE", `/v1/oauth/grants/${encodeURIComponent(str(c, "id"))}`).then(() => {
            announce(`${name} revoked.`)
            refresh()
          }, failed), `Revoke ${name}`)
      ]
    }), { id: "connected-clients" }),
    h("h2", {}, "Plan and billing"),
    billing === null ? h("p", {}, "Billing needs an owner's or admin's session.") : billingSection(billing, str(me, "role"), refresh),
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
