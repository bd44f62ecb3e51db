import { relativeTime } from "../output.ts";

/*
 * What the CLI reads of a bearer token by itself, without verifying it (the server verifies):
 * who it names and when it expires, to say so before and after the server refuses it.
 */

/** The claims of a JWT's payload, or {} when it is not one. */
export function jwtClaims(token: string): Record<string, unknown> {
  try {
    const claims: unknown = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
    return typeof claims === "object" && claims !== null ? (claims as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** When the token expires (its `exp`), if it says. */
export function jwtExpiry(token: string): Date | undefined {
  const exp = jwtClaims(token)["exp"];
  return typeof exp === "number" && Number.isFinite(exp) ? new Date(exp * 1000) : undefined;
}

/** "2026-11-25T19:00:00.000Z (in 42 minutes)": absolute and relative, for people. */
export const whenText = (at: Date, now = new Date()): string =>
  `${at.toISOString()} (${relativeTime(at.toISOString(), now)})`;
