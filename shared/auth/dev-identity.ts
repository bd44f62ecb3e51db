import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { fail } from "../errors.ts";
import { readCookie } from "./cookies.ts";

/**
 * Development mode as several people (DEV_IDENTITIES, docs/configuration.md): one person trying
 * review and merge alone needs a second identity, since approving one's own branch is refused.
 * A request names who it acts as with a header (the CLI's `--as`), or a browser with a cookie the
 * web interface's switcher sets. Both are honoured only in development mode, which is
 * loopback-only; outside it the header is refused and the cookie never read.
 */

/** The header a client names its development identity in. */
export const DEV_IDENTITY_HEADER = "x-quire-dev-identity";
/** The cookie the web switcher sets (no `__Host-` prefix: development mode is plain http on loopback). */
export const DEV_IDENTITY_COOKIE = "quire_dev_identity";

/** What a development-mode actor carries for the web switcher. */
export interface DevActorInfo {
  /** Who the request may act as, the default first. */
  identities: readonly string[];
  /** The switcher form's CSRF token: random per process, which is all development mode runs. */
  csrfToken: string;
}

export interface DevMode {
  /** The identity a request acts as: the header's, else the cookie's, else the default. */
  identityOf(headers: IncomingHttpHeaders): string;
  actorInfo: DevActorInfo;
}

const headerValue = (headers: IncomingHttpHeaders): string | undefined => {
  const value = headers[DEV_IDENTITY_HEADER];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
};

/** Development mode over `identities` (lower case, default first); null when the list is empty. */
export function devMode(identities: readonly string[]): DevMode | null {
  const [fallback] = identities;
  if (fallback === undefined) return null;
  const listed = (email: string) => identities.includes(email.toLowerCase());
  return {
    actorInfo: { identities, csrfToken: randomBytes(24).toString("base64url") },
    identityOf(headers) {
      const named = headerValue(headers);
      if (named !== undefined) {
        if (!listed(named))
          fail(
            "UNAUTHENTICATED",
            `${DEV_IDENTITY_HEADER}: '${named.slice(0, 254)}' is not one of DEV_IDENTITIES (${identities.join(", ")}); development mode acts only as those`,
          );
        return named;
      }
      // A cookie naming someone no longer listed (the server restarted with another list) is stale: the default.
      const cookie = decodeCookie(readCookie(headers, DEV_IDENTITY_COOKIE));
      return cookie !== undefined && listed(cookie) ? cookie : fallback;
    },
  };
}

function decodeCookie(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** Outside development mode the header is refused, never honoured nor silently dropped. */
export function refuseDevIdentityHeader(headers: IncomingHttpHeaders): void {
  if (headerValue(headers) !== undefined)
    fail(
      "VALIDATION_FAILED",
      `${DEV_IDENTITY_HEADER} is honoured only in development mode (DEV_IDENTITIES, on a loopback address); sign in instead, and drop 'quire --as' or QUIRE_AS`,
    );
}
