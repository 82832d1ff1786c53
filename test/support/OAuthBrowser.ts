/**
 * A browser on the authorization server's pages, driven with fetch: read a
 * page's forms, sign in (keeping the session cookie), choose on the consent
 * page and post it. Used by the HTTP tests and by the cluster tests (any
 * node's base URL).
 */
import { createHash, randomBytes } from "node:crypto"
import { REDIRECT } from "./McpOAuthProvider.ts"

export interface Credentials {
  readonly email: string
  readonly password: string
}

export interface Form {
  readonly method: string
  readonly action: string | undefined
  /** The hidden fields. */
  readonly fields: URLSearchParams
  readonly checkboxes: ReadonlyArray<string>
  /** `name=value` of each radio button. */
  readonly radios: ReadonlyArray<string>
  /** Each select's options (value, label, whether selected), by the select's name. */
  readonly selects: ReadonlyMap<string, ReadonlyArray<{ readonly value: string; readonly label: string; readonly selected: boolean }>>
}

const decode = (text: string) =>
  text.replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")

const attribute = (tag: string, name: string) => {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag)
  return match === null ? undefined : decode(match[1]!)
}

/** Every form of a page, in order. */
export const readForms = (html: string): ReadonlyArray<Form> =>
  [...html.matchAll(/(<form [^>]*>)([\s\S]*?)<\/form>/g)].map(([, open, inner]) => {
    const fields = new URLSearchParams()
    const checkboxes: Array<string> = []
    const radios: Array<string> = []
    for (const [tag] of inner!.matchAll(/<input [^>]*>/g)) {
      const type = attribute(tag, "type")
      const name = attribute(tag, "name")
      const value = attribute(tag, "value") ?? ""
      if (type === "hidden" && name !== undefined) fields.append(name, value)
      if (type === "checkbox") checkboxes.push(value)
      if (type === "radio") radios.push(`${name}=${value}`)
    }
    const selects = new Map<string, Array<{ value: string; label: string; selected: boolean }>>()
    for (const [, select, options] of inner!.matchAll(/(<select [^>]*>)([\s\S]*?)<\/select>/g)) {
      selects.set(
        attribute(select!, "name") ?? "",
        [...options!.matchAll(/(<option [^>]*>)([^<]*)<\/option>/g)].map(([, option, label]) => ({
          value: attribute(option!, "value") ?? "",
          label: decode(label!),
          selected: / selected[\s>]/.test(option!)
        }))
      )
    }
    return { method: attribute(open!, "method") ?? "get", action: attribute(open!, "action"), fields, checkboxes, radios, selects }
  })

/** The page's form that posts (sign-in or consent). */
export const postForm = (html: string) => {
  const form = readForms(html).find((f) => f.method === "post")
  if (form === undefined) throw new Error(`no form posts on this page: ${html}`)
  return form
}

export interface Choice {
  readonly decision?: "approve" | "deny"
  readonly spaces?: ReadonlyArray<string>
  readonly access?: "read" | "write"
  readonly csrf?: string
  /** Replaces the consent form's org_id (what a forged form would send). */
  readonly orgId?: string
}

export const pkce = () => {
  const verifier = randomBytes(32).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}

/** An authorization request to `base` for the resource `<resourceBase>/mcp` (the base itself unless PUBLIC_URL differs). */
export const authorizeUrl = (base: string, clientId: string, challenge: string, extra: Record<string, string> = {}, resourceBase = base) =>
  `${base}/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s1",
    resource: `${resourceBase}/mcp`,
    ...extra
  })}`

export const codeOf = (location: string | null) => {
  const url = new URL(location ?? "http://missing/")
  return { code: url.searchParams.get("code"), state: url.searchParams.get("state"), error: url.searchParams.get("error"), url }
}

/** The sign-in page at the authorization URL, its form posted: the session cookie and the consent page it leads to. */
export const signIn = async (base: string, authorizationUrl: string, account: Credentials) => {
  const first = await fetch(authorizationUrl, { redirect: "manual" })
  const signInHtml = await first.text()
  if (first.status !== 200) throw new Error(`sign-in page: ${first.status} ${signInHtml}`)
  // The sign-in form's secret comes back in its cookie and in the form, as a browser sends them.
  const loginCookie = first.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
  const form = postForm(signInHtml)
  form.fields.set("email", account.email)
  form.fields.set("password", account.password)
  const signedIn = await fetch(new URL(form.action!, base), { method: "POST", body: form.fields, headers: { cookie: loginCookie }, redirect: "manual" })
  const cookie = signedIn.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
  const setCookie = signedIn.headers.getSetCookie().join("\n")
  const consentResponse = await fetch(new URL(signedIn.headers.get("location")!, base), { headers: { cookie }, redirect: "manual" })
  const consentHtml = await consentResponse.text()
  if (consentResponse.status !== 200) throw new Error(`consent page: ${consentResponse.status} ${consentHtml}`)
  return { signInHtml, signInSetCookie: first.headers.getSetCookie().join("\n"), signedInStatus: signedIn.status, setCookie, cookie, consentHtml }
}

/** Fetches a page with the session cookie (following nothing). */
export const open = async (url: string | URL, cookie: string) => {
  const response = await fetch(url, { headers: { cookie }, redirect: "manual" })
  return { status: response.status, html: await response.text() }
}

/** Posts the consent page's form with `choice`: where the server then redirects, or the page it shows. */
export const decide = async (base: string, consentHtml: string, cookie: string, choice: Choice = {}) => {
  const consent = postForm(consentHtml)
  consent.fields.set("decision", choice.decision ?? "approve")
  if (choice.csrf !== undefined) consent.fields.set("csrf_token", choice.csrf)
  if (choice.orgId !== undefined) consent.fields.set("org_id", choice.orgId)
  // The page's checked default: read and write, when it offers write.
  const access = choice.access ?? (consent.radios.includes("access=write") ? "write" : undefined)
  if (access !== undefined) consent.fields.set("access", access)
  if (choice.spaces === undefined) consent.fields.set("spaces_mode", "all")
  else {
    consent.fields.set("spaces_mode", "some")
    for (const space of choice.spaces) consent.fields.append("space", space)
  }
  const decided = await fetch(new URL(consent.action!, base), { method: "POST", body: consent.fields, headers: { cookie }, redirect: "manual" })
  return { consent, status: decided.status, location: decided.headers.get("location"), body: await decided.text() }
}

/**
 * A browser at the authorization URL: the sign-in page, its form posted, the
 * session cookie kept, the consent page, its form posted; answers where the
 * server finally redirects (and the pages seen on the way).
 */
export const browse = async (base: string, authorizationUrl: string, account: Credentials, choice: Choice = {}) => {
  const signedIn = await signIn(base, authorizationUrl, account)
  const decided = await decide(base, signedIn.consentHtml, signedIn.cookie, choice)
  return { ...signedIn, ...decided }
}

/** Registers a public client with the loopback redirect URI; its client_id. */
export const registerClient = async (base: string, name = "Manual Client") => {
  const response = await fetch(`${base}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT] })
  })
  const body: unknown = await response.json()
  if (response.status !== 201 || typeof body !== "object" || body === null || !("client_id" in body) || typeof body.client_id !== "string") {
    throw new Error(`registration: ${response.status} ${JSON.stringify(body)}`)
  }
  return body.client_id
}

/** A form-encoded POST (the token and revocation endpoints): the status and the body, parsed when it is JSON. */
export const formPost = async (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { method: "POST", body: new URLSearchParams(fields), headers })
  const text = await response.text()
  let body: unknown = text
  try {
    body = text === "" ? undefined : JSON.parse(text)
  } catch {
    // Not JSON: kept as text.
  }
  return { status: response.status, headers: response.headers, body }
}
