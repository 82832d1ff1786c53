import { api, ApiError, session, str } from "../api.ts"
import { announce, field, h, valueOf } from "../dom.ts"

/** Sign in with an existing account (email and password); the session token is kept for this tab. */
export const signIn = (go: (hash: string) => void) => {
  const form = h("form", { class: "card narrow", "aria-labelledby": "signin-title" },
    h("h1", { id: "signin-title" }, "Sign in to Engram"),
    field("Email", h("input", { name: "email", type: "email", autocomplete: "username", required: true })),
    field("Password", h("input", { name: "password", type: "password", autocomplete: "current-password", required: true })),
    h("button", { type: "submit" }, "Sign in"))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    if (!(form instanceof HTMLFormElement)) return
    try {
      const answer = await api("POST", "/auth/login", { email: valueOf(form, "email"), password: valueOf(form, "password") })
      session.set(str(answer, "session_token"))
      announce("Signed in.")
      go("#/spaces")
    } catch (error) {
      announce(error instanceof ApiError ? error.message : "Sign-in failed.", "error")
    }
  })
  return form
}
