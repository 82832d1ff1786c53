/**
 * The authorization server's pages: plain server-rendered HTML (no script),
 * labelled form fields, the authorization request carried in hidden fields.
 */
import { HttpServerResponse } from "@effect/platform"

const escape = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1b1d21;margin:0}
main{max-width:28rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin-top:0}label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=email],input[type=password],select{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #767676;border-radius:4px;font:inherit}
fieldset{border:1px solid #c4c7cc;border-radius:4px;margin:1rem 0}fieldset label{display:inline;font-weight:400;margin:0}
.choice{margin:.35rem 0}.org{margin:1rem 0;padding-bottom:1rem;border-bottom:1px solid #c4c7cc}button{font:inherit;padding:.55rem 1.2rem;border-radius:4px;border:1px solid #1a4fa0;margin:1rem .5rem 0 0;cursor:pointer}
.primary{background:#1a4fa0;color:#fff}.secondary{background:#fff;color:#1a4fa0}.error{color:#a4000f;font-weight:600}
:focus-visible{outline:3px solid #f5a700;outline-offset:2px}`

const SECURITY_HEADERS = {
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer"
}

export const page = (title: string, body: string, status = 200) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<title>${escape(title)} · Engram</title><style>${STYLE}</style></head><body><main><h1>${escape(title)}</h1>${body}</main></body></html>`,
    { status, contentType: "text/html; charset=utf-8", headers: SECURITY_HEADERS }
  )

/** A refusal shown to the user instead of a redirect (the redirect URI is not trusted yet). */
export const errorPage = (message: string, status = 400) =>
  page("Authorization failed", `<p class="error" role="alert">${escape(message)}</p>`, status)

const hidden = (params: ReadonlyArray<readonly [string, string]>) =>
  params.map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`).join("")

/**
 * The sign-in form. `loginCsrf` is the browser's own sign-in secret (also in
 * a cookie): a form posted from another site carries neither, so nobody can
 * sign a browser into their own account and have it consent there.
 */
export const signInPage = (
  params: ReadonlyArray<readonly [string, string]>,
  clientName: string,
  loginCsrf: string,
  error?: string,
  status?: number
) =>
  page(
    "Sign in to Engram",
    `<p>${escape(clientName)} wants to connect to your Engram memory. Sign in to continue.</p>` +
      (error === undefined ? "" : `<p class="error" role="alert">${escape(error)}</p>`) +
      `<form method="post" action="/oauth/authorize">${hidden(params)}<input type="hidden" name="action" value="signin">` +
      `<input type="hidden" name="login_csrf" value="${escape(loginCsrf)}">` +
      `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>` +
      `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>` +
      `<button class="primary" type="submit">Sign in</button></form>`,
    status ?? (error === undefined ? 200 : 401)
  )

export interface ConsentView {
  readonly params: ReadonlyArray<readonly [string, string]>
  readonly clientName: string
  /** The organization the grant would be for. */
  readonly orgId: string
  readonly organization: string
  /** Every organization the user belongs to (a chooser is shown when there are several). */
  readonly organizations: ReadonlyArray<{ readonly id: string; readonly name: string; readonly role: string }>
  readonly email: string
  readonly writeRequested: boolean
  readonly spaces: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly csrf: string
  readonly error?: string | undefined
}

export const consentPage = (view: ConsentView) => {
  const access = view.writeRequested
    ? `<fieldset><legend>What it may do</legend>` +
      `<div class="choice"><input type="radio" id="access-write" name="access" value="write" checked> <label for="access-write">Read and write memories</label></div>` +
      `<div class="choice"><input type="radio" id="access-read" name="access" value="read"> <label for="access-read">Read memories only</label></div></fieldset>`
    : `<p>It may <strong>read</strong> memories (not write them).</p><input type="hidden" name="access" value="read">`
  const spaces = view.spaces.map((space, i) =>
    `<div class="choice"><input type="checkbox" id="space-${i}" name="space" value="${escape(space.id)}"> ` +
    `<label for="space-${i}">${escape(space.name === space.id ? space.id : `${space.name} (${space.id})`)}</label></div>`
  ).join("")
  // Choosing another organization reloads this page for it (its spaces); the consent form below grants the one shown.
  const chooser = view.organizations.length < 2 ? "" :
    `<form method="get" action="/oauth/authorize" class="org">${hidden(view.params)}` +
    `<label for="org">Grant access to the organization</label><select id="org" name="org_id">` +
    view.organizations.map((org) =>
      `<option value="${escape(org.id)}"${org.id === view.orgId ? " selected" : ""}>${escape(`${org.name} (${org.role})`)}</option>`
    ).join("") +
    `</select><button class="secondary" type="submit">Switch organization</button></form>`
  return page(
    "Allow access to your memory?",
    `<p><strong>${escape(view.clientName)}</strong> wants access to the organization <strong>${escape(view.organization)}</strong>` +
      ` (signed in as ${escape(view.email)}).</p>` +
      chooser +
      (view.error === undefined ? "" : `<p class="error" role="alert">${escape(view.error)}</p>`) +
      `<form method="post" action="/oauth/authorize">${hidden(view.params)}` +
      `<input type="hidden" name="action" value="consent"><input type="hidden" name="csrf_token" value="${escape(view.csrf)}">` +
      `<input type="hidden" name="org_id" value="${escape(view.orgId)}">` +
      access +
      `<fieldset><legend>Which spaces it may reach</legend>` +
      `<div class="choice"><input type="radio" id="spaces-all" name="spaces_mode" value="all" checked> <label for="spaces-all">All spaces, including new ones</label></div>` +
      `<div class="choice"><input type="radio" id="spaces-some" name="spaces_mode" value="some"> <label for="spaces-some">Only the spaces ticked below</label></div>` +
      (spaces === "" ? `<p>This organization has no spaces yet.</p>` : spaces) +
      `</fieldset>` +
      `<button class="primary" type="submit" name="decision" value="approve">Allow</button>` +
      `<button class="secondary" type="submit" name="decision" value="deny">Deny</button></form>`,
    view.error === undefined ? 200 : 400
  )
}
