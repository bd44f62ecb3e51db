import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../functions/server.ts";
import { orgResponse } from "../../shared/api/orgs.ts";
import { ManualClock } from "../../shared/clock.ts";
import { errorBody } from "../../shared/http/responses.ts";
import { api } from "../support/api.ts";
import { startSecondInstance, startTestApp, type TestApp } from "../support/app.ts";
import {
  cookieClient,
  cookiePair,
  csrfTokenOf,
  setCookieNamed,
  signIn,
  signInSteps,
} from "../support/signin.ts";
import { errorOf, expectOk, world } from "../support/world.ts";

/**
 * Browser sign-in over real HTTP (docs/sessions.md): the authorization code flow against the
 * tests' own provider, the session cookie's rules, sign-out and revocation, and CSRF.
 */

const CLIENT_ID = "quire-test";
const CLIENT_SECRET = "web-client-secret";
const KEY_1 = randomBytes(32).toString("hex");
const KEY_2 = randomBytes(32).toString("hex");

let app: TestApp;
const clock = new ManualClock();
const others: RunningServer[] = [];

beforeAll(async () => {
  app = await startTestApp(
    { OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, SVC_SESSION_KEYS: KEY_1 },
    { context: { clock } },
  );
  app.idp.registerClient({
    id: CLIENT_ID,
    secret: CLIENT_SECRET,
    redirectUris: [`${app.url}/auth/callback`],
  });
});
afterAll(async () => {
  for (const s of others) await s.close();
  await app.close();
});

/** Another instance on the same database and provider, with `env` (a key rotation, another URL). */
async function instance(env: Record<string, string>): Promise<string> {
  const server = await startSecondInstance(
    app,
    { OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, ...env },
    clock,
  );
  others.push(server);
  app.idp.registerClient({
    id: CLIENT_ID,
    secret: CLIENT_SECRET,
    redirectUris: [`${app.url}/auth/callback`, ...others.map((o) => `${o.url}/auth/callback`)],
  });
  return server.url;
}

const get = (path: string, headers: Record<string, string> = {}, base = app.url) =>
  fetch(base + path, { headers, redirect: "manual" });
const sessionCount = async () =>
  Number((await app.sql<{ n: string }>("SELECT count(*) AS n FROM sessions"))[0]?.n);

/** The attributes of a Set-Cookie value, lower-cased names. */
function attributes(setCookie: string): Record<string, string> {
  return Object.fromEntries(
    setCookie
      .split(";")
      .slice(1)
      .map((p) => p.trim().split("="))
      .map(([k, v]) => [(k ?? "").toLowerCase(), v ?? ""]),
  );
}

/** A form another site's page posts with the victim's cookie, as a browser would send it. */
const crossSiteForm = (url: string, cookie: string, body: string) =>
  fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
    body,
  });

describe("the sign-in round trip", () => {
  it("sends the browser to the provider with PKCE, state and nonce, and back with a session that works on the API", async () => {
    const steps = await signInSteps(app, "Ann@Example.com", { returnTo: "/orgs?limit=5" });
    expect(steps.login.status).toBe(302);
    const authorize = new URL(steps.login.headers.get("location") ?? "");
    expect(`${authorize.origin}${authorize.pathname}`).toBe(app.idp.authorizationEndpoint);
    expect(Object.fromEntries(authorize.searchParams)).toEqual({
      response_type: "code",
      client_id: CLIENT_ID,
      redirect_uri: `${app.url}/auth/callback`,
      scope: "openid email",
      state: expect.stringMatching(/^[\w-]{43}$/),
      nonce: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge_method: "S256",
    });
    // The token request carried the client secret, the verifier and the registered redirect URI.
    const tokenRequest = app.idp.requests.filter((r) => r.endpoint === "token").at(-1)?.params;
    expect(tokenRequest).toMatchObject({
      grant_type: "authorization_code",
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uri: `${app.url}/auth/callback`,
      code_verifier: expect.stringMatching(/^[\w-]{43}$/),
    });

    expect(steps.callback.status).toBe(302);
    expect(steps.callback.headers.get("location")).toBe("/orgs?limit=5");
    const session = setCookieNamed(steps.callback, "quire_session") ?? "";
    const cookie = cookiePair(session);
    const me = await api(
      cookieClient(app.url, { cookie, csrfToken: await csrfTokenOf(app.url, cookie) }),
    ).post("/orgs", { body: { name: world(app).unique("ann") } });
    expectOk(me, 201);
    expect(me.body.created_by).toBe("ann@example.com");
    const [row] = await app.sql("SELECT identity, revoked_at FROM sessions ORDER BY created_at DESC LIMIT 1");
    expect(row).toEqual({ identity: "ann@example.com", revoked_at: null });
  });

  it("sets the session cookie HttpOnly, SameSite=Lax, Path=/, 7 days, no Secure on loopback; spends the login cookie", async () => {
    const steps = await signInSteps(app, "attrs@example.com");
    const login = setCookieNamed(steps.login, "quire_login") ?? "";
    expect(login.startsWith("quire_login=")).toBe(true);
    expect(attributes(login)).toEqual({ path: "/", "max-age": "600", httponly: "", samesite: "Lax" });
    const session = setCookieNamed(steps.callback, "quire_session") ?? "";
    expect(session).toMatch(/^quire_session=[\w-]{43}\.[\w-]{43};/);
    expect(attributes(session)).toEqual({
      path: "/",
      "max-age": String(7 * 24 * 3600),
      httponly: "",
      samesite: "Lax",
    });
    expect(attributes(setCookieNamed(steps.callback, "quire_login") ?? "")["max-age"]).toBe("0");
    expect(steps.callback.headers.get("cache-control")).toBe("no-store");
  });

  it("behind an https public URL: Secure cookies with the __Host- prefix and an https redirect_uri", async () => {
    const base = await instance({ SVC_PUBLIC_URL: "https://quire.example.com" });
    const res = await get("/auth/login", {}, base);
    const cookie = res.headers.getSetCookie()[0] ?? "";
    expect(cookie.startsWith("__Host-quire_login=")).toBe(true);
    expect(attributes(cookie)).toMatchObject({ secure: "", httponly: "", samesite: "Lax", path: "/" });
    expect(new URL(res.headers.get("location") ?? "").searchParams.get("redirect_uri")).toBe(
      "https://quire.example.com/auth/callback",
    );
  });

  it("gives roles exactly as a bearer token would, route by route and role by role", async () => {
    const repo = await world(app).repo({
      people: { rita: "reader", will: "writer", mia: "maintainer", ada: "admin" },
    });
    const callers = [repo.owner, ...Object.values<string>(repo.people), "stranger@example.com"];
    const fresh = () => world(app).unique("b");
    // Reads, and mutations that need reader, writer, maintainer and admin; each call makes its own object.
    const calls: [string, string, () => unknown][] = [
      ["GET", `${repo.base}/branches`, () => undefined],
      ["GET", `${repo.base}/tree?branch=main`, () => undefined],
      ["GET", `${repo.base}/roles`, () => undefined],
      ["POST", `${repo.base}/branch`, () => ({ name: fresh() })],
      ["PUT", `${repo.base}/roles/someone-${fresh()}@example.com`, () => ({ role: "reader" })],
      ["POST", "/orgs", () => ({ name: fresh() })],
    ];
    const answers = async (send: (who: string) => ReturnType<typeof cookieClient>) => {
      const out: string[] = [];
      for (const who of callers)
        for (const [method, path, body] of calls) {
          const b = body();
          const res = await send(who).raw(
            method,
            path,
            b === undefined
              ? {}
              : { body: JSON.stringify(b), headers: { "content-type": "application/json" } },
          );
          out.push(`${who} ${method} ${path.replace(/someone-\w+/, "someone")}: ${res.status}`);
        }
      return out;
    };
    const sessions = new Map<string, Awaited<ReturnType<typeof signIn>>>();
    for (const who of callers) sessions.set(who, await signIn(app, who));
    const withCookie = await answers((who) =>
      cookieClient(app.url, sessions.get(who) ?? { cookie: "", csrfToken: "" }),
    );
    const withBearer = await answers((who) => app.as(who));
    expect(withCookie).toEqual(withBearer);
    // And the answers differ by role: the comparison is not between two refusals.
    expect(new Set(withBearer.map((a) => a.slice(-3)))).toEqual(new Set(["200", "201", "403", "404"]));
  });

  it("opens a repo's event stream with the cookie, as a page's EventSource does", async () => {
    const repo = await world(app).repo();
    const session = await signIn(app, repo.owner);
    const controller = new AbortController();
    const res = await fetch(`${app.url}${repo.base}/events`, {
      headers: { cookie: session.cookie, accept: "text/event-stream" },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    controller.abort();
    const stranger = await signIn(app, "stream-stranger@example.com");
    const refused = await fetch(`${app.url}${repo.base}/events`, {
      headers: { cookie: stranger.cookie, accept: "text/event-stream" },
    });
    expect(refused.status).toBe(404);
  });

  it("lets an Authorization header alone decide when both are sent", async () => {
    const session = await signIn(app, "cookie-person@example.com");
    const res = await fetch(`${app.url}/orgs`, {
      method: "POST",
      headers: {
        cookie: session.cookie,
        authorization: `Bearer ${await app.idp.token("bearer-person@example.com")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ name: world(app).unique("both") }),
    });
    expect(res.status).toBe(201);
    expect(orgResponse.parse(await res.json()).created_by).toBe("bearer-person@example.com");
  });
});

describe("a callback that does not belong to this browser's sign-in is refused", () => {
  const refused = async (steps: Awaited<ReturnType<typeof signInSteps>>, status: number, message: RegExp) => {
    expect(steps.callback.status).toBe(status);
    expect(errorBody.parse(await steps.callback.json()).error).toMatch(message);
    expect(setCookieNamed(steps.callback, "quire_session")).toBeUndefined();
    expect(attributes(setCookieNamed(steps.callback, "quire_login") ?? "")["max-age"]).toBe("0");
  };

  it("a state that is not the one this browser's login cookie holds", async () => {
    const before = await sessionCount();
    const steps = await signInSteps(app, "mallory@example.com", {
      tamper: (callback, loginCookie) => {
        callback.searchParams.set("state", "forged-state");
        return { callback, loginCookie };
      },
    });
    await refused(steps, 400, /state does not match/);
    expect(await sessionCount()).toBe(before);
  });

  it("no login cookie at all (a callback URL sent to someone else), or a forged one", async () => {
    await refused(
      await signInSteps(app, "victim@example.com", { tamper: (callback) => ({ callback, loginCookie: "" }) }),
      400,
      /no sign-in is in progress/,
    );
    await refused(
      await signInSteps(app, "victim@example.com", {
        tamper: (callback, loginCookie) => ({ callback, loginCookie: `${loginCookie.slice(0, -3)}AAA` }),
      }),
      400,
      /no sign-in is in progress/,
    );
  });

  it("a login older than ten minutes", async () => {
    const steps = await signInSteps(app, "slow@example.com", {
      tamper: (callback, loginCookie) => {
        clock.advanceSeconds(601);
        return { callback, loginCookie };
      },
    });
    await refused(steps, 400, /expired/);
  });

  it("an ID token whose nonce is not this login's", async () => {
    await refused(
      await signInSteps(app, "nonce@example.com", { idToken: { claims: { nonce: "someone-elses" } } }),
      401,
      /nonce/,
    );
  });

  it("an ID token whose email is not verified, and one for another audience", async () => {
    await refused(
      await signInSteps(app, "unverified@example.com", { idToken: { claims: { email_verified: false } } }),
      401,
      /email_verified/,
    );
    await refused(
      await signInSteps(app, "aud@example.com", { idToken: { audience: "another-app" } }),
      401,
      /aud/,
    );
  });

  it("a code the provider refuses (unknown to it), and a provider error", async () => {
    await refused(
      await signInSteps(app, "replay@example.com", {
        tamper: (callback, loginCookie) => {
          callback.searchParams.set("code", "not-a-code-it-issued");
          return { callback, loginCookie };
        },
      }),
      401,
      /invalid_grant/,
    );
    app.idp.signInAs(null);
    const login = await get("/auth/login");
    const back = await fetch(
      (await fetch(login.headers.get("location") ?? "", { redirect: "manual" })).headers.get("location") ??
        "",
      { redirect: "manual", headers: { cookie: cookiePair(login.headers.getSetCookie()[0] ?? "") } },
    );
    expect(back.status).toBe(401);
    expect(errorBody.parse(await back.json()).error).toMatch(/login_required/);
  });
});

describe("a login is single-use on the server, whatever the provider does", () => {
  it("a callback replayed with its login cookie at a provider that honours a code twice is refused, with no session", async () => {
    app.idp.honourCodesTwice(true);
    try {
      const first = await signInSteps(app, "captured@example.com");
      expect(first.callback.status).toBe(302);
      const before = await sessionCount();
      const tokenRequests = app.idp.requests.filter((r) => r.endpoint === "token").length;
      // The captured callback URL and login cookie, replayed by a browser (it asks for HTML).
      const again = await fetch(first.authorize.headers.get("location") ?? "", {
        redirect: "manual",
        headers: { cookie: first.loginCookie, accept: "text/html" },
      });
      expect(again.status).toBe(400);
      expect(again.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(again.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
      const page = await again.text();
      expect(page).toContain("Sign-in refused");
      expect(page).toContain("this sign-in was already used");
      expect(page).toContain('<a href="/auth/login">Sign in again</a>');
      expect(setCookieNamed(again, "quire_session")).toBeUndefined();
      expect(await sessionCount()).toBe(before);
      // Refused before the code reached the provider a second time.
      expect(app.idp.requests.filter((r) => r.endpoint === "token").length).toBe(tokenRequests);
    } finally {
      app.idp.honourCodesTwice(false);
    }
  });

  it("two replays racing each other start one session between them", async () => {
    app.idp.honourCodesTwice(true);
    try {
      app.idp.signInAs("racer@example.com");
      const login = await get("/auth/login");
      const loginCookie = cookiePair(setCookieNamed(login, "quire_login") ?? "");
      const authorize = await fetch(login.headers.get("location") ?? "", { redirect: "manual" });
      const callback = authorize.headers.get("location") ?? "";
      const before = await sessionCount();
      const answers = await Promise.all(
        [1, 2].map(() => fetch(callback, { redirect: "manual", headers: { cookie: loginCookie } })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([302, 400]);
      expect(await sessionCount()).toBe(before + 1);
    } finally {
      app.idp.honourCodesTwice(false);
    }
  });

  it("a refused callback is spent too: the same login cannot be tried again", async () => {
    const steps = await signInSteps(app, "nonce2@example.com", {
      idToken: { claims: { nonce: "someone-elses" } },
    });
    expect(steps.callback.status).toBe(401);
    const again = await fetch(steps.authorize.headers.get("location") ?? "", {
      redirect: "manual",
      headers: { cookie: steps.loginCookie },
    });
    expect(again.status).toBe(400);
    expect(errorBody.parse(await again.json()).error).toMatch(/already used/);
  });

  it("deletes expired logins at the next /auth/login", async () => {
    await get("/auth/login");
    clock.advanceSeconds(601);
    await get("/auth/login");
    const rows = await app.sql<{ n: string }>(
      "SELECT count(*) AS n FROM login_states WHERE expires_at < $1",
      [clock.now()],
    );
    expect(Number(rows[0]?.n)).toBe(0);
    expect(
      Number((await app.sql<{ n: string }>("SELECT count(*) AS n FROM login_states"))[0]?.n),
    ).toBeGreaterThan(0);
  });
});

describe("return_to stays on this origin", () => {
  const leaving = [
    "//evil.example",
    "///evil.example",
    "/\\evil.example",
    "\\\\evil.example",
    "https://evil.example/",
    "http:evil.example",
    "javascript:alert(1)",
    "evil.example",
    "/%2F%2Fevil.example",
    "/%5Cevil.example",
    "%2F%2Fevil.example",
    "/%252F%252Fevil.example",
    "/\t/evil.example",
    "/x\r\nSet-Cookie: a=b",
    "/auth/logout",
    "/%zz",
  ];
  for (const value of leaving)
    it(`refuses ${JSON.stringify(value)}: back to /`, async () => {
      const session = await signIn(app, "traveller@example.com", { returnTo: value });
      expect(session.location).toBe("/");
    });

  it("keeps a path with its query", async () => {
    const path = "/repos/acme/app/-/tree/main?at=3&path=docs%2Fa.md";
    expect((await signIn(app, "traveller@example.com", { returnTo: path })).location).toBe(path);
  });
});

describe("sign-out and ended sessions", () => {
  it("GET /auth/logout changes nothing; POST ends the session, and its cookie replayed is refused", async () => {
    const session = await signIn(app, "leaver@example.com");
    const page = await get("/auth/logout", { cookie: session.cookie });
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    expect(await page.text()).toContain('<form method="post" action="/auth/logout">');
    const me = cookieClient(app.url, session);
    expect((await me.get("/orgs")).status).toBe(200);

    const out = await fetch(`${app.url}/auth/logout`, {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: session.cookie,
        origin: app.url,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ csrf_token: session.csrfToken }),
    });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/auth/logout");
    expect(attributes(setCookieNamed(out, "quire_session") ?? "")["max-age"]).toBe("0");

    const replay = await me.get("/orgs");
    expect(replay.status).toBe(401);
    expect(errorOf(replay).error).toMatch(/session has ended/);
    expect(await (await get("/auth/logout", { cookie: session.cookie })).text()).toContain(
      "You are signed out",
    );
  });

  it("refuses a cross-site sign-out form (the session lives on)", async () => {
    const session = await signIn(app, "stays@example.com");
    const forged = await crossSiteForm(`${app.url}/auth/logout`, session.cookie, "");
    expect(forged.status).toBe(403);
    expect((await cookieClient(app.url, session).get("/orgs")).status).toBe(200);
  });

  it("refuses a revoked session, an idle one and an expired one", async () => {
    const revoked = await signIn(app, "revoked@example.com");
    await app.sql("UPDATE sessions SET revoked_at = now() WHERE identity = 'revoked@example.com'");
    expect((await cookieClient(app.url, revoked).get("/orgs")).status).toBe(401);

    const idle = await signIn(app, "idle@example.com");
    clock.advanceSeconds(11 * 3600);
    expect((await cookieClient(app.url, idle).get("/orgs")).status).toBe(200);
    clock.advanceSeconds(11 * 3600); // 11 h since the last request: still within the idle limit
    expect((await cookieClient(app.url, idle).get("/orgs")).status).toBe(200);
    clock.advanceSeconds(12 * 3600 + 1);
    expect((await cookieClient(app.url, idle).get("/orgs")).status).toBe(401);

    // A request every 10 hours keeps a session from idling out, but not past 7 days.
    const busy = await signIn(app, "busy@example.com");
    for (let hours = 10; hours <= 160; hours += 10) {
      clock.advanceSeconds(10 * 3600);
      expect((await cookieClient(app.url, busy).get("/orgs")).status, `${hours} h`).toBe(200);
    }
    clock.advanceSeconds(10 * 3600);
    expect((await cookieClient(app.url, busy).get("/orgs")).status).toBe(401);
  });

  it("refuses a cookie whose signature or id was tampered with", async () => {
    const { cookie, csrfToken } = await signIn(app, "tamper@example.com");
    const [name, value = ""] = cookie.split("=");
    const [id = "", mac = ""] = value.split(".");
    const otherId = `${id.slice(0, -2)}${id.endsWith("AA") ? "BB" : "AA"}`;
    for (const forged of [`${id}.${mac.slice(0, -2)}AA`, `${otherId}.${mac}`, id, `${value}.x`])
      expect(
        (await cookieClient(app.url, { cookie: `${name}=${forged}`, csrfToken }).get("/orgs")).status,
      ).toBe(401);
  });
});

describe("session keys rotate", () => {
  it("an old key still verifies after a new one is put first; a cookie of a dropped key is refused", async () => {
    const old = await signIn(app, "rotate@example.com"); // signed with KEY_1
    const rotated = await instance({ SVC_SESSION_KEYS: `${KEY_2},${KEY_1}` });
    const newOnly = await instance({ SVC_SESSION_KEYS: KEY_2 });
    expect((await cookieClient(rotated, old).get("/orgs")).status).toBe(200);
    expect((await cookieClient(newOnly, old).get("/orgs")).status).toBe(401);
    // What the rotated instance signs, the new key alone verifies.
    const steps = await signInSteps({ ...app, url: rotated }, "rotate@example.com");
    const fresh = cookiePair(setCookieNamed(steps.callback, "quire_session") ?? "");
    expect((await cookieClient(newOnly, { cookie: fresh, csrfToken: "" }).get("/orgs")).status).toBe(200);
    expect((await cookieClient(app.url, { cookie: fresh, csrfToken: "" }).get("/orgs")).status).toBe(401);
  });

  it("without SVC_SESSION_KEYS, a key generated once and kept in the database signs", async () => {
    const a = await instance({ SVC_SESSION_KEYS: "" });
    const b = await instance({ SVC_SESSION_KEYS: "" });
    const steps = await signInSteps({ ...app, url: a }, "generated@example.com");
    const cookie = cookiePair(setCookieNamed(steps.callback, "quire_session") ?? "");
    expect((await cookieClient(b, { cookie, csrfToken: "" }).get("/orgs")).status).toBe(200);
    const [row] = await app.sql(
      "SELECT octet_length(secret) AS n FROM server_secrets WHERE name = 'session-cookie'",
    );
    expect(row).toEqual({ n: 32 });
  });

  it("without OIDC_CLIENT_ID, browser sign-in answers 503 saying so", async () => {
    const server = await startSecondInstance(app, {}, clock);
    others.push(server);
    const res = await get("/auth/login", {}, server.url);
    expect(res.status).toBe(503);
    expect(errorBody.parse(await res.json()).error).toMatch(/OIDC_CLIENT_ID/);
  });
});

describe("unauthenticated: browsers are sent to sign in, API clients get 401", () => {
  const html = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

  it("redirects a page request to /auth/login with where it was going", async () => {
    const res = await get("/orgs?limit=2", { accept: html });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`/auth/login?return_to=${encodeURIComponent("/orgs?limit=2")}`);
    const ended = await signIn(app, "ended@example.com");
    await app.sql("UPDATE sessions SET revoked_at = now() WHERE identity = 'ended@example.com'");
    expect((await get("/orgs", { accept: html, cookie: ended.cookie })).status).toBe(302);
  });

  it("answers 401 JSON to API clients, and to a non-GET even from a browser", async () => {
    for (const accept of ["application/json", "*/*", "text/event-stream"]) {
      const res = await get("/orgs", { accept });
      expect(res.status, accept).toBe(401);
      expect(errorBody.parse(await res.json()).code).toBe("UNAUTHENTICATED");
    }
    const post = await fetch(`${app.url}/orgs`, {
      method: "POST",
      headers: { accept: html },
      redirect: "manual",
    });
    expect(post.status).toBe(401);
  });
});

describe("CSRF: cookie mutations must come from this origin with the token; bearer requests are unaffected", () => {
  let session: Awaited<ReturnType<typeof signIn>>;
  beforeAll(async () => {
    session = await signIn(app, "csrf@example.com");
  });
  const orgCount = async () =>
    Number(
      (
        await app.sql<{ n: string }>("SELECT count(*) AS n FROM orgs WHERE created_by = 'csrf@example.com'")
      )[0]?.n,
    );
  const create = (headers: Record<string, string | null>) =>
    cookieClient(app.url, session, headers).post("/orgs", { name: world(app).unique("csrf") });

  it("refuses a cross-origin POST, a POST with neither Origin nor Referer, and one without the token", async () => {
    const before = await orgCount();
    const attempts: Record<string, string | null>[] = [
      { origin: "https://evil.example" },
      { origin: "null" },
      { origin: `${app.url}.evil.example` },
      { origin: null, referer: "https://evil.example/page" },
      { origin: null },
      { "x-csrf-token": null },
      { "x-csrf-token": "0".repeat(43) },
    ];
    for (const headers of attempts) {
      const res = await create(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(errorOf(res).error).toMatch(/CSRF/);
    }
    expect(await orgCount()).toBe(before);
  });

  it("accepts the same origin (or a same-origin Referer) with the token", async () => {
    expect((await create({})).status).toBe(201);
    expect((await create({ origin: null, referer: `${app.url}/ui/orgs` })).status).toBe(201);
  });

  it("a cross-site form post (urlencoded, the token field guessed) is refused", async () => {
    const res = await crossSiteForm(`${app.url}/orgs`, session.cookie, "name=forged&csrf_token=guess");
    expect(res.status).toBe(403);
  });

  it("leaves bearer requests alone: no Origin needed, any Origin accepted", async () => {
    const bearer = app.as("csrf-bearer@example.com");
    expect((await bearer.post("/orgs", { name: world(app).unique("b") })).status).toBe(201);
    const res = await bearer.raw("POST", "/orgs", {
      body: JSON.stringify({ name: world(app).unique("b") }),
      headers: { "content-type": "application/json", origin: "https://elsewhere.example" },
    });
    expect(res.status).toBe(201);
  });
});
