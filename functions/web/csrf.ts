import type { IncomingHttpHeaders } from "node:http";
import { fail } from "../../shared/errors.ts";
import { type Html, html } from "./html.ts";

/**
 * Cross-site request forgery: a form post must come from this origin. Browsers send `Origin` on
 * every POST (and `Sec-Fetch-Site`); a post whose origin is another site is refused before
 * anything is read or changed. A post with neither header (not a browser) is a bearer-token
 * client, which a forged page cannot be.
 */
export function requireSameOrigin(headers: IncomingHttpHeaders): void {
  const site = headers["sec-fetch-site"];
  if (site === "cross-site" || site === "same-site")
    fail("FORBIDDEN", "a form post from another site is refused (cross-site request forgery)");
  const origin = headers.origin;
  if (origin === undefined) return;
  const host = headers["x-forwarded-host"] ?? headers.host;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    fail("FORBIDDEN", "a form post with an unreadable Origin is refused");
  }
  if (originHost !== host)
    fail("FORBIDDEN", "a form post from another origin is refused (cross-site request forgery)");
}

/** The hidden field a form carries for the CSRF check (nothing yet beyond the origin check). */
export function csrfField(_headers: IncomingHttpHeaders): Html {
  return html``;
}
