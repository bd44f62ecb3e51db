import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { publicUrl } from "../ci/urls.ts";
import type { AppContext } from "../context.ts";
import { fail } from "../errors.ts";

/**
 * Cross-site request forgery protection for requests authenticated by the session cookie
 * (docs/sessions.md). SameSite=Lax already keeps the cookie off cross-site POSTs in today's
 * browsers; these checks do not rely on it. A bearer token is never sent by a browser on its
 * own, so bearer requests need neither.
 */

/** The header a page's script sends the token in, and the field a form posts it in. */
export const CSRF_HEADER = "x-csrf-token";
export const CSRF_FIELD = "csrf_token";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method.toUpperCase());

const originOf = (url: string): string | null => {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : null;
  } catch {
    return null;
  }
};

/**
 * The request must come from a page of this service: its `Origin` (else its `Referer`) must be the
 * public URL's origin. Browsers send `Origin` on every POST, PUT, PATCH and DELETE; a request with
 * neither is refused too, since it cannot be told apart from a forged one.
 */
export function requireSameOrigin(
  ctx: Pick<AppContext, "config" | "selfUrl">,
  headers: IncomingHttpHeaders,
): void {
  const expected = new URL(publicUrl(ctx)).origin;
  const origin = headers.origin;
  const referer = headers.referer;
  if (origin === undefined && referer === undefined)
    fail(
      "FORBIDDEN",
      "a request signed in with the session cookie must send an Origin header (CSRF protection)",
    );
  const from = origin !== undefined ? originOf(origin) : originOf(referer ?? "");
  if (from !== expected)
    fail("FORBIDDEN", `cross-origin request refused: it must come from ${expected} (CSRF protection)`);
}

/**
 * The `csrf_token` part of a multipart/form-data body (a form that uploads a file). The browser
 * sends fields in the form's order, and pages put the token first, so only the body's start is read.
 */
function multipartToken(type: string, body: Buffer): string | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
  const delimiter = boundary?.[1] ?? boundary?.[2];
  if (!delimiter) return undefined;
  const head = body.subarray(0, 8192).toString("latin1");
  for (const part of head.split(`--${delimiter}`)) {
    const [headers = "", value] = part.split("\r\n\r\n", 2);
    if (value !== undefined && new RegExp(`name="${CSRF_FIELD}"`).test(headers))
      return value.replace(/\r\n$/, "");
  }
  return undefined;
}

/** The CSRF token a request carries: the `X-CSRF-Token` header, else a form body's `csrf_token` field. */
function tokenOf(headers: IncomingHttpHeaders, body: Buffer | undefined): string | undefined {
  const header = headers[CSRF_HEADER];
  if (typeof header === "string") return header;
  const type = headers["content-type"] ?? "";
  if (body && /^application\/x-www-form-urlencoded\b/i.test(type))
    return new URLSearchParams(body.toString("utf8")).get(CSRF_FIELD) ?? undefined;
  if (body && /^multipart\/form-data\b/i.test(type)) return multipartToken(type, body);
  return undefined;
}

/** The request carries the session's CSRF token. */
export function requireCsrfToken(
  headers: IncomingHttpHeaders,
  body: Buffer | undefined,
  expected: string,
): void {
  const given = Buffer.from(tokenOf(headers, body) ?? "");
  const want = Buffer.from(expected);
  if (given.length !== want.length || !timingSafeEqual(given, want))
    fail(
      "FORBIDDEN",
      `a request signed in with the session cookie must send its CSRF token (header X-CSRF-Token or form field ${CSRF_FIELD})`,
    );
}

/** Both checks, for a mutation made with the session cookie. */
export function requireCsrfProtection(
  ctx: Pick<AppContext, "config" | "selfUrl">,
  req: { headers: IncomingHttpHeaders; body: Buffer | undefined },
  csrfToken: string,
): void {
  requireSameOrigin(ctx, req.headers);
  requireCsrfToken(req.headers, req.body, csrfToken);
}
