import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { publicUrl } from "../ci/urls.ts";
import { isLoopbackHost } from "../config.ts";
import type { AppContext } from "../context.ts";
import { serverSecret } from "../secrets.ts";

/** The server secret that signs cookies when SVC_SESSION_KEYS is unset (shared/secrets.ts). */
const GENERATED_KEY_NAME = "session-cookie";

/**
 * Whether cookies carry `Secure`: always, except when the public URL is plain http on a loopback
 * address (`npm start`, the tests), where a browser would not send a Secure cookie back.
 */
export function secureCookies(ctx: Pick<AppContext, "config" | "selfUrl">): boolean {
  const url = new URL(publicUrl(ctx));
  return !(url.protocol === "http:" && isLoopbackHost(url.hostname));
}

/**
 * A cookie's name: with `__Host-` when it is Secure, which makes the browser refuse the cookie
 * unless it is Secure, for this host only (no Domain) and for every path; a sibling subdomain
 * cannot then plant one. On loopback (no Secure) the prefix is not allowed, so the bare name.
 */
export const cookieName = (base: string, secure: boolean): string => (secure ? `__Host-${base}` : base);

/** A `Set-Cookie` value: HttpOnly, SameSite=Lax, Path=/, Secure unless on loopback. */
export function setCookie(
  name: string,
  value: string,
  opts: { secure: boolean; maxAgeSeconds: number },
): string {
  const parts = [`${name}=${value}`, "Path=/", `Max-Age=${opts.maxAgeSeconds}`, "HttpOnly", "SameSite=Lax"];
  if (opts.secure) parts.push("Secure");
  return parts.join("; ");
}

/** A `Set-Cookie` value that deletes the cookie. */
export const clearCookie = (name: string, secure: boolean): string =>
  setCookie(name, "", { secure, maxAgeSeconds: 0 });

/** The first value of cookie `name` in the request's `Cookie` header(s). */
export function readCookie(headers: IncomingHttpHeaders, name: string): string | undefined {
  for (const pair of (headers.cookie ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** The signing keys: SVC_SESSION_KEYS (first signs, all verify), else one kept in the database. */
async function cookieKeys(ctx: AppContext): Promise<Buffer[]> {
  const configured = ctx.config.SVC_SESSION_KEYS;
  return configured.length > 0 ? configured : [await serverSecret(ctx, GENERATED_KEY_NAME)];
}

// The purpose is part of what is signed, so a value signed as one kind of cookie is no other kind.
const mac = (key: Buffer, purpose: string, payload: string) =>
  createHmac("sha256", key).update(`${purpose}\0${payload}`).digest("base64url");

/** `payload.mac`, signed with the current key. `payload` must not contain `.`, `;` or `,`. */
export async function signCookieValue(ctx: AppContext, purpose: string, payload: string): Promise<string> {
  const [key] = await cookieKeys(ctx);
  if (!key) throw new Error("no session cookie key");
  return `${payload}.${mac(key, purpose, payload)}`;
}

/** The payload of a value signed by `signCookieValue` with any configured key, else null. */
export async function verifyCookieValue(
  ctx: AppContext,
  purpose: string,
  value: string,
): Promise<string | null> {
  const dot = value.lastIndexOf(".");
  if (dot <= 0) return null;
  const payload = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1));
  for (const key of await cookieKeys(ctx)) {
    const expected = Buffer.from(mac(key, purpose, payload));
    if (given.length === expected.length && timingSafeEqual(given, expected)) return payload;
  }
  return null;
}
