import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { Reply } from "../../shared/http/route.ts";
import type { Html } from "./html.ts";

/**
 * The Content-Security-Policy of every page: nothing but this origin's own script and stylesheet
 * files, no inline script or style, no plugin, no framing, forms post only here. Images are `self`
 * and `data:` (a Markdown file's inline pictures); `connect-src 'self'` lets the live script read
 * the repo's event stream and re-fetch the page.
 */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers every web reply carries, refusals and redirects included. */
export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

/** A reply of bytes with a content type: a stream, so the dispatcher sends it as it is, not as JSON. */
export function bytesReply(status: number, body: Buffer, headers: Record<string, string>): Reply {
  return {
    status,
    stream: Readable.from([body]),
    headers: { ...SECURITY_HEADERS, "content-length": String(body.length), ...headers },
  };
}

/** A page. Pages show what the caller may see now, so no shared cache keeps them. */
export const htmlReply = (page: Html, status = 200): Reply =>
  bytesReply(status, Buffer.from(page.text, "utf8"), {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "private, no-store",
  });

/** A redirect to a canonical page (302), or after a form post (303 See Other: followed with GET). */
export const seeOther = (location: string, status: 302 | 303 = 302): Reply => ({
  status,
  headers: { ...SECURITY_HEADERS, location, "cache-control": "no-store" },
});

/** A static asset: content-addressed by its hash in the URL, so it can be cached for good. */
export interface Asset {
  path: string;
  body: Buffer;
  contentType: string;
}

export function asset(name: string, contentType: string, text: string): Asset {
  const body = Buffer.from(text, "utf8");
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
  return { path: `/ui/static/${hash}/${name}`, body, contentType };
}

export const assetReply = (a: Asset): Reply =>
  bytesReply(200, a.body, {
    "content-type": a.contentType,
    "cache-control": "public, max-age=31536000, immutable",
  });
