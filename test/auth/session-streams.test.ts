import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../functions/server.ts";
import { ManualClock } from "../../shared/clock.ts";
import { openSse, type SseClient } from "../events/sse.ts";
import { startSecondInstance, startTestApp, type TestApp } from "../support/app.ts";
import { type BrowserSession, signIn } from "../support/signin.ts";
import { world } from "../support/world.ts";

/**
 * An event stream opened with a session cookie lives no longer than its session (docs/sessions.md,
 * "Ending a session"): sign-out, revocation and expiry end it within seconds, on every instance.
 */

const CLIENT_ID = "quire-test";
const CLIENT_SECRET = "session-streams-secret";
/** The hub checks sessions every 3 s; a stream must be gone well before the audit's 40 s. */
const WITHIN_MS = 6_000;

let app: TestApp;
let second: RunningServer;
const clock = new ManualClock();
const open: SseClient[] = [];

beforeAll(async () => {
  app = await startTestApp(
    { OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET },
    { context: { clock } },
  );
  second = await startSecondInstance(
    app,
    { OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET },
    clock,
  );
  app.idp.registerClient({
    id: CLIENT_ID,
    secret: CLIENT_SECRET,
    redirectUris: [`${app.url}/auth/callback`, `${second.url}/auth/callback`],
  });
});
afterAll(async () => {
  for (const s of open) s.close();
  await second?.close();
  await app?.close();
});

/** A repo stream opened with the session's cookie, as a page's EventSource opens it. */
async function streamOf(session: BrowserSession, repoBase: string, base = app.url): Promise<SseClient> {
  const s = await openSse(base, `${repoBase}/events`, { headers: { cookie: session.cookie } });
  open.push(s);
  expect(s.status).toBe(200);
  return s;
}

async function signOut(session: BrowserSession): Promise<void> {
  const res = await fetch(`${app.url}/auth/logout`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: session.cookie, origin: app.url, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf_token: session.csrfToken }),
  });
  expect(res.status).toBe(303);
}

/** Resolves with how long the stream took to end, or fails after WITHIN_MS. */
async function endsWithin(s: SseClient, since: number): Promise<number> {
  await s.until((c) => c.isEnded(), WITHIN_MS, "the stream to end");
  const closed = s.messages.find((m) => m.event === "closed");
  expect(JSON.parse(closed?.data ?? "{}")).toEqual({ reason: "session ended" });
  return performance.now() - since;
}

describe("a session's event streams end with it", () => {
  it("signing out ends the stream within seconds, on this instance and another; other sessions stay", async () => {
    const repo = await world(app).repo();
    const leaving = await signIn(app, repo.owner);
    const staying = await signIn(app, repo.owner);
    const here = await streamOf(leaving, repo.base);
    const there = await streamOf(leaving, repo.base, second.url);
    const other = await streamOf(staying, repo.base);
    const since = performance.now();
    await signOut(leaving);
    const [tookHere, tookThere] = await Promise.all([endsWithin(here, since), endsWithin(there, since)]);
    expect(Math.max(tookHere, tookThere)).toBeLessThan(WITHIN_MS);
    expect(other.isEnded()).toBe(false);
    // The session that stays still receives events.
    await repo.commit("main", { "after.md": "still here\n" });
    await other.until((c) => c.events().length > 0, 10_000, "an event on the other session's stream");
  });

  it("a session revoked by an operator ends its stream", async () => {
    const repo = await world(app).repo();
    const session = await signIn(app, repo.owner);
    const s = await streamOf(session, repo.base);
    const since = performance.now();
    await app.sql("UPDATE sessions SET revoked_at = now() WHERE identity = $1", [repo.owner.toLowerCase()]);
    await endsWithin(s, since);
  });

  it("a session that expires while its stream is open ends it (the injected clock moves 7 days)", async () => {
    const repo = await world(app).repo();
    const session = await signIn(app, repo.owner);
    const s = await streamOf(session, repo.base);
    await app.server.ctx.events.checkSessions(); // a check now: the session lives
    expect(s.isEnded()).toBe(false);
    const since = performance.now();
    clock.advance(7 * 24 * 3600_000 + 1_000);
    await endsWithin(s, since);
  });
});
