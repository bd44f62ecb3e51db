import type { Actor } from "../../shared/auth/actor.ts";
import { CSRF_FIELD } from "../../shared/auth/csrf.ts";
import { type Html, html } from "./html.ts";

/**
 * The hidden field that carries the session's CSRF token in a form (docs/sessions.md). The access
 * check refuses a cookie-signed form post without it, or from another origin, before the route
 * runs (shared/http/access.ts); a bearer-token caller has no session and needs none.
 */
export function csrfField(actor: Actor | null): Html {
  const token = actor?.session?.csrfToken;
  return token ? html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">` : html``;
}
