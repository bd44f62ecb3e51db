import { createHash, randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import { fail } from "../errors.ts";
import {
  clearCookie,
  cookieName,
  readCookie,
  secureCookies,
  setCookie,
  signCookieValue,
  verifyCookieValue,
} from "./cookies.ts";

/**
 * Browser sessions (docs/sessions.md): a random id in a signed, HttpOnly cookie; the database
 * keeps its SHA-256 with the identity and the session's limits, so signing out or revoking ends
 * the session even for a copy of the cookie.
 */

/** A session ends after this long without a request... */
export const SESSION_IDLE_MS = 12 * 3600_000;
/** ...and this long after sign-in, whatever its use. */
export const SESSION_MAX_MS = 7 * 24 * 3600_000;
/** `last_seen_at` moves only when older than this, so reads do not each write a row. */
const LAST_SEEN_STEP_MS = 5 * 60_000;
/** Rows this long past their expiry are deleted at the next sign-in. */
const KEEP_EXPIRED_MS = 24 * 3600_000;

const COOKIE = "quire_session";
const PURPOSE = "session";

/** A session of a request, as its cookie and the database show it. */
export interface Session {
  identity: string;
  /** The token its cookie mutations must carry (shared/auth/csrf.ts). */
  csrfToken: string;
  /** The SHA-256 of its id, its key in `sessions`. */
  idHash: Buffer;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest();
/** Derived from the session id, which only the session's browser holds (HttpOnly cookie). */
const csrfTokenOf = (id: string) => createHash("sha256").update(`csrf\0${id}`).digest("base64url");

export const sessionCookieName = (ctx: AppContext): string => cookieName(COOKIE, secureCookies(ctx));

const session_insert = `
  INSERT INTO sessions (id_sha256, identity, created_at, last_seen_at, expires_at)
  VALUES ($1, $2, $3, $3, $4)`;
const session_purge = `DELETE FROM sessions WHERE expires_at < $1`;
const session_select = `
  SELECT identity, last_seen_at, expires_at, revoked_at FROM sessions WHERE id_sha256 = $1`;
const session_touch = `UPDATE sessions SET last_seen_at = $2 WHERE id_sha256 = $1 AND last_seen_at < $2`;
const session_select_live = `
  SELECT id_sha256 FROM sessions
  WHERE id_sha256 = ANY($1::bytea[]) AND revoked_at IS NULL AND expires_at > $2 AND last_seen_at > $3`;
const session_revoke = `UPDATE sessions SET revoked_at = $2 WHERE id_sha256 = $1 AND revoked_at IS NULL`;

/**
 * Starts a session for `identity` (on `db`: the callback's transaction); returns the `Set-Cookie`
 * value that carries it.
 */
export async function createSession(
  ctx: AppContext,
  identity: string,
  db: Queryable = ctx.pool,
): Promise<string> {
  const now = ctx.clock.now();
  const id = randomBytes(32).toString("base64url");
  await db.query(session_purge, [new Date(now.getTime() - KEEP_EXPIRED_MS)]);
  await db.query(session_insert, [
    sha256(id),
    identity.toLowerCase(),
    now,
    new Date(now.getTime() + SESSION_MAX_MS),
  ]);
  return setCookie(sessionCookieName(ctx), await signCookieValue(ctx, PURPOSE, id), {
    secure: secureCookies(ctx),
    maxAgeSeconds: SESSION_MAX_MS / 1000,
  });
}

/** The session id of a request's cookie whose signature holds, or null without such a cookie. */
async function sessionIdOf(ctx: AppContext, headers: IncomingHttpHeaders): Promise<string | null> {
  const value = readCookie(headers, sessionCookieName(ctx));
  if (value === undefined || value === "") return null;
  const id = await verifyCookieValue(ctx, PURPOSE, value);
  if (id === null || !/^[A-Za-z0-9_-]{43}$/.test(id))
    fail("UNAUTHENTICATED", "the session cookie is not valid; sign in again at /auth/login");
  return id;
}

/**
 * The live session of a request's cookie, null when it sends none. A cookie that is forged, or
 * whose session was signed out, revoked, idle too long or expired, is UNAUTHENTICATED.
 */
export async function findSession(ctx: AppContext, headers: IncomingHttpHeaders): Promise<Session | null> {
  const id = await sessionIdOf(ctx, headers);
  if (id === null) return null;
  const idHash = sha256(id);
  const { rows } = await ctx.pool.query(session_select, [idHash]);
  const row = rows[0] as
    | { identity: string; last_seen_at: Date; expires_at: Date; revoked_at: Date | null }
    | undefined;
  const now = ctx.clock.now();
  const live =
    row !== undefined &&
    row.revoked_at === null &&
    row.expires_at > now &&
    now.getTime() - row.last_seen_at.getTime() < SESSION_IDLE_MS;
  if (!live) fail("UNAUTHENTICATED", "the session has ended; sign in again at /auth/login");
  if (now.getTime() - row.last_seen_at.getTime() >= LAST_SEEN_STEP_MS)
    await ctx.pool.query(session_touch, [idHash, now]);
  return { identity: row.identity, csrfToken: csrfTokenOf(id), idHash };
}

/**
 * Which of `idHashes` (hex SHA-256 of session ids) have ended at `now`: revoked, idle, expired or
 * deleted. One indexed read for all of them, so the event streams can ask every few seconds.
 */
export async function endedSessions(
  db: Queryable,
  idHashes: readonly string[],
  now: Date,
): Promise<Set<string>> {
  if (idHashes.length === 0) return new Set();
  const { rows } = await db.query<{ id_sha256: Buffer }>(session_select_live, [
    idHashes.map((h) => Buffer.from(h, "hex")),
    now,
    new Date(now.getTime() - SESSION_IDLE_MS),
  ]);
  const live = new Set(rows.map((r) => r.id_sha256.toString("hex")));
  return new Set(idHashes.filter((h) => !live.has(h)));
}

/** Ends a session: its cookie, replayed, is refused from now on. */
export async function revokeSession(
  ctx: AppContext,
  session: Session,
  db: Queryable = ctx.pool,
): Promise<void> {
  await db.query(session_revoke, [session.idHash, ctx.clock.now()]);
}

/** The `Set-Cookie` value that removes the session cookie from the browser. */
export const clearSessionCookie = (ctx: AppContext): string =>
  clearCookie(sessionCookieName(ctx), secureCookies(ctx));
