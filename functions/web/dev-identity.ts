import { z } from "zod";
import { setCookie } from "../../shared/auth/cookies.ts";
import { CSRF_FIELD, requireCsrfToken, requireSameOrigin } from "../../shared/auth/csrf.ts";
import { DEV_IDENTITY_COOKIE } from "../../shared/auth/dev-identity.ts";
import { safeReturnTo } from "../../shared/auth/return-to.ts";
import { publicUrl } from "../../shared/ci/urls.ts";
import { fail } from "../../shared/errors.ts";
import { redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { bodyText } from "../../shared/http/text.ts";
import { seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/** How long the switcher's choice lasts in the browser. */
const COOKIE_SECONDS = 30 * 24 * 3600;

const switchForm = z.strictObject({
  [CSRF_FIELD]: z.string().max(512),
  identity: z.string().max(254),
});

/** Back to the page the form was on (same origin only), else the start page. */
function pageOfForm(referer: string | undefined, origin: string): string {
  if (!referer) return u.orgsUrl();
  try {
    const url = new URL(referer);
    return url.origin === origin ? safeReturnTo(url.pathname + url.search) : u.orgsUrl();
  } catch {
    return u.orgsUrl();
  }
}

/**
 * The web switcher of development mode (DEV_IDENTITIES, shared/auth/dev-identity.ts): sets the
 * cookie that picks who this browser acts as. Outside development mode there is no such page,
 * and the cookie is never read. Same origin and the switcher's CSRF token are required, as for
 * every form.
 */
export const devIdentityRoute = route({
  method: "POST",
  path: "/ui/dev/identity",
  access: "public",
  summary: "Web, development mode only: act as another of DEV_IDENTITIES in this browser (form post)",
  responses: { 303: redirect },
  handler: async ({ ctx, headers, rawBody }) => {
    if (!ctx.config.DEV_IDENTITY)
      fail(
        "NOT_FOUND",
        "no such page: switching identities exists only in development mode (DEV_IDENTITIES)",
      );
    requireSameOrigin(ctx, headers);
    const dev = (await ctx.auth.authenticate(headers, ctx))?.dev;
    if (!dev) fail("NOT_FOUND", "no such page: switching identities exists only in development mode");
    requireCsrfToken(headers, rawBody, dev.csrfToken);
    const fields = Object.fromEntries(new URLSearchParams(rawBody ? bodyText(rawBody) : ""));
    const form = switchForm.safeParse(fields);
    if (!form.success) fail("VALIDATION_FAILED", z.prettifyError(form.error));
    const identity = form.data.identity.trim().toLowerCase();
    if (!dev.identities.includes(identity))
      fail("VALIDATION_FAILED", `'${identity}' is not one of DEV_IDENTITIES (${dev.identities.join(", ")})`);
    const cookie = setCookie(DEV_IDENTITY_COOKIE, encodeURIComponent(identity), {
      secure: false,
      maxAgeSeconds: COOKIE_SECONDS,
    });
    const back = pageOfForm(headers.referer, new URL(publicUrl(ctx)).origin);
    return { ...seeOther(back, 303), cookies: [cookie] };
  },
});
