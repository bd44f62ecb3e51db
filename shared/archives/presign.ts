import { createHmac, timingSafeEqual } from "node:crypto";
import type { AppContext } from "../context.ts";
import { fail } from "../errors.ts";
import { serverSecret } from "../secrets.ts";

/**
 * Presigned archive URLs (SPEC, Authentication 8): `sig` is the hex HMAC-SHA256, under a
 * server-held key, of `repo + "\n" + branch + "\n" + sequence + "\n" + expires`. See
 * docs/archives.md.
 */

/** How long a presigned URL is valid unless the caller asks otherwise (the spec's 1 hour). */
export const ARCHIVE_URL_TTL_SECONDS = 3600;
/** The row of `server_secrets` that holds the generated key when SVC_ARCHIVE_SIGNING_KEY is unset. */
export const ARCHIVE_KEY_NAME = "archive_signing_key";

/** The signing key: SVC_ARCHIVE_SIGNING_KEY when set, else the one in `server_secrets`, cached in process. */
export function archiveSigningKey(ctx: AppContext): Promise<Buffer> {
  const configured = ctx.config.SVC_ARCHIVE_SIGNING_KEY;
  return configured ? Promise.resolve(configured) : serverSecret(ctx, ARCHIVE_KEY_NAME);
}

/** What a presigned URL grants: the archive of `repo` at (`branch`, `sequence`) until `expires`. */
export interface ArchiveGrant {
  repo: string;
  branch: string;
  sequence: number;
  /** Unix time in seconds after which the URL is refused. */
  expires: number;
}

/** The signed message: the four fields joined by newlines, numbers in decimal. */
export function archiveSignatureMessage(g: ArchiveGrant): string {
  return `${g.repo}\n${g.branch}\n${g.sequence}\n${g.expires}`;
}

/** The hex HMAC-SHA256 of a grant under `key`. */
export function archiveSignature(key: Buffer, g: ArchiveGrant): string {
  return createHmac("sha256", key).update(archiveSignatureMessage(g), "utf8").digest("hex");
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/**
 * The checks of any URL signed with the server's key (an archive's, a CI log's): SIGNATURE_INVALID
 * unless `sig` is the hex of `expected` (compared in constant time; a sig of the wrong length or
 * not hex fails before any comparison), then URL_EXPIRED when `expires` (Unix seconds) is before
 * `nowMs`. The signature comes first, so only a genuine URL is ever told that it expired. `what`
 * names the URL in the messages.
 */
export function requireSignedUrl(
  what: string,
  expected: Buffer,
  given: { sig: string; expires: number },
  nowMs: number,
): void {
  const sig = HEX_SHA256.test(given.sig) ? Buffer.from(given.sig, "hex") : null;
  if (sig === null || sig.length !== expected.length || !timingSafeEqual(sig, expected))
    fail("SIGNATURE_INVALID", `the ${what}'s signature is not valid`);
  if (given.expires < Math.floor(nowMs / 1000)) fail("URL_EXPIRED", `the ${what} has expired`);
}

/**
 * Checks a presigned request (`requireSignedUrl` against the grant's signature). Nothing here
 * looks the repo up: a forged URL gets the same answer whether or not its repo exists.
 */
export async function verifyArchiveSignature(
  ctx: AppContext,
  grant: ArchiveGrant & { sig: string },
  now: number = Date.now(),
): Promise<void> {
  const expected = Buffer.from(archiveSignature(await archiveSigningKey(ctx), grant), "hex");
  requireSignedUrl("archive URL", expected, grant, now);
}

/**
 * A presigned archive URL: `{baseUrl}/repos/{repo}/-/archive?branch=&at=&expires=&sig=`, valid
 * for `ttlSeconds` (default 1 hour). `baseUrl` is the service's public URL (a trailing slash is
 * dropped). Anyone holding the URL can download that one archive until it expires.
 */
export async function presignArchiveUrl(
  ctx: AppContext,
  opts: { repo: string; branch: string; sequence: number; ttlSeconds?: number; baseUrl: string },
  now: number = Date.now(),
): Promise<string> {
  const ttl = opts.ttlSeconds ?? ARCHIVE_URL_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl <= 0)
    throw new Error(`ttlSeconds must be a positive integer, got ${ttl}`);
  if (!Number.isSafeInteger(opts.sequence) || opts.sequence < 0)
    throw new Error(`sequence must be a non-negative integer, got ${opts.sequence}`);
  const grant: ArchiveGrant = {
    repo: opts.repo,
    branch: opts.branch,
    sequence: opts.sequence,
    expires: Math.floor(now / 1000) + ttl,
  };
  const sig = archiveSignature(await archiveSigningKey(ctx), grant);
  const query = new URLSearchParams({
    branch: grant.branch,
    at: String(grant.sequence),
    expires: String(grant.expires),
    sig,
  });
  return `${opts.baseUrl.replace(/\/+$/, "")}/repos/${opts.repo}/-/archive?${query}`;
}
