import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { startTestApp } from "../support/app.ts";
import { b64, type Client, client } from "../support/client.ts";
import { useFixture } from "../support/world.ts";

const ALICE = "alice@example.com";
const BOB = "bob@example.com";

/** A client of a development-mode server acting as `who` (no header: the default identity). */
const as = (url: string, who?: string): Client => {
  const base = client(url, async () => null);
  return {
    ...base,
    raw: base.raw,
    post: (path, body) =>
      base.raw("POST", path, {
        body: JSON.stringify(body ?? {}),
        headers: { "content-type": "application/json", ...(who ? { "x-quire-dev-identity": who } : {}) },
      }),
    put: (path, body) =>
      base.raw("PUT", path, {
        body: JSON.stringify(body ?? {}),
        headers: { "content-type": "application/json", ...(who ? { "x-quire-dev-identity": who } : {}) },
      }),
    get: (path) => base.raw("GET", path, { headers: who ? { "x-quire-dev-identity": who } : {} }),
  };
};

describe("DEV_IDENTITIES: one person trying review and merge alone", () => {
  const app = useFixture(() => startTestApp({ DEV_IDENTITIES: `${ALICE},${BOB}` }));

  it("lets bob review alice's branch, then alice merge it", async () => {
    const alice = as(app.url);
    const bob = as(app.url, BOB);
    expect((await alice.post("/orgs", { name: "duo" })).status).toBe(201);
    const repo = await alice.post("/repos", { owner: "duo", name: "duo/notes" });
    expect(repo.body).toMatchObject({ created_by: ALICE });
    expect((await alice.put(`/repos/duo/notes/-/roles/${BOB}`, { role: "writer" })).status).toBeLessThan(300);
    expect((await alice.post("/repos/duo/notes/-/branch", { name: "draft" })).status).toBe(201);
    const commit = await alice.post("/repos/duo/notes/-/commit", {
      branch: "draft",
      message: "first words",
      files: [{ path: "a.md", content: b64("hello") }],
    });
    expect(commit.status).toBe(201);

    const own = await alice.post("/repos/duo/notes/-/review", {
      branch: "draft",
      status: "approved",
      body: "",
    });
    expect(own.status).toBe(403);
    expect(own.body).toMatchObject({ code: "SELF_APPROVAL" });

    const review = await bob.post("/repos/duo/notes/-/review", {
      branch: "draft",
      status: "approved",
      body: "ok",
    });
    expect(review.status).toBe(201);
    expect(review.body).toMatchObject({ reviewer: BOB, status: "approved" });

    const merged = await alice.post("/repos/duo/notes/-/merge", { branch: "draft" });
    expect(merged.status).toBe(200);
  });

  it("refuses a header naming someone not listed, saying who is", async () => {
    const res = await as(app.url, "mallory@example.com").get("/orgs");
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: "UNAUTHENTICATED" });
    expect((res.body as { error: string }).error).toContain(`not one of DEV_IDENTITIES (${ALICE}, ${BOB})`);
  });

  it("matches the header case-insensitively, as identities are", async () => {
    const org = await as(app.url, "Bob@Example.com").post("/orgs", { name: "bobs" });
    expect(org.body).toMatchObject({ created_by: BOB });
  });
});

describe("the web switcher of development mode", () => {
  const app = useFixture(() => startTestApp({ DEV_IDENTITIES: `${ALICE},${BOB}` }));

  const page = async (cookie?: string) => {
    const res = await fetch(`${app.url}/ui`, {
      headers: { accept: "text/html", ...(cookie ? { cookie } : {}) },
    });
    return res.text();
  };
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${app.url}/ui/dev/identity`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url, ...headers },
      body,
    });

  it("switches this browser to another listed identity with a CSRF-protected form", async () => {
    const before = await page();
    expect(before).toContain(`Signed in as ${ALICE}`);
    expect(before).toMatch(/<select id="dev-as" name="identity"><option value="alice@example.com" selected>/);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(before)?.[1] ?? "";
    const res = await post(`csrf_token=${csrf}&identity=${encodeURIComponent(BOB)}`, {
      referer: `${app.url}/ui/orgs/x?y=1`,
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/ui/orgs/x?y=1");
    const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect(cookie).toBe(`quire_dev_identity=${encodeURIComponent(BOB)}`);
    expect(await page(cookie)).toContain(`Signed in as ${BOB}`);
  });

  it("refuses a switch without the token, from another origin, or to someone not listed", async () => {
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page())?.[1] ?? "";
    expect((await post(`identity=${encodeURIComponent(BOB)}`)).status).toBe(403);
    expect((await post(`csrf_token=wrong&identity=${encodeURIComponent(BOB)}`)).status).toBe(403);
    const crossSite = await post(`csrf_token=${csrf}&identity=${encodeURIComponent(BOB)}`, {
      origin: "http://evil.example",
    });
    expect(crossSite.status).toBe(403);
    const stranger = await post(`csrf_token=${csrf}&identity=mallory%40example.com`);
    expect(stranger.status).toBe(400);
    expect(stranger.headers.get("set-cookie")).toBeNull();
  });
});

describe("the development identity header outside development mode", () => {
  const app = useFixture(() => startTestApp());

  it("is refused, with or without a token, and never honoured", async () => {
    const token = await app.idp.token(ALICE);
    for (const headers of [
      { "x-quire-dev-identity": BOB, authorization: `Bearer ${token}` },
      { "x-quire-dev-identity": BOB },
    ]) {
      const res = await fetch(`${app.url}/orgs`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ name: "never" }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain("only in development mode");
    }
    expect(await app.sql("SELECT 1 FROM orgs WHERE name = 'never'")).toEqual([]);
  });

  it("has no switcher page, and ignores the switcher's cookie", async () => {
    const post = await fetch(`${app.url}/ui/dev/identity`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
      body: "identity=bob%40example.com&csrf_token=x",
    });
    expect(post.status).toBe(404);
    const token = await app.idp.token(ALICE);
    const org = await fetch(`${app.url}/orgs`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        cookie: `quire_dev_identity=${BOB}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ name: "alices" }),
    });
    expect(((await org.json()) as { created_by: string }).created_by).toBe(ALICE);
  });
});

describe("DEV_IDENTITIES configuration", () => {
  it("makes the first identity the default, DEV_IDENTITY, which the loopback rule then covers", () => {
    const config = loadConfig({ DEV_IDENTITIES: `${ALICE}, ${BOB}` });
    expect(config.DEV_IDENTITY).toBe(ALICE);
    expect(config.DEV_IDENTITIES).toEqual([ALICE, BOB]);
  });

  it("refuses DEV_IDENTITY outside DEV_IDENTITIES, and a list entry that is no email", () => {
    expect(() =>
      loadConfig({ DEV_IDENTITY: "carol@example.com", DEV_IDENTITIES: `${ALICE},${BOB}` }),
    ).toThrow(/DEV_IDENTITY: must be one of DEV_IDENTITIES/);
    expect(() => loadConfig({ DEV_IDENTITIES: `${ALICE},bob` })).toThrow(ConfigError);
    expect(loadConfig({ DEV_IDENTITY: BOB, DEV_IDENTITIES: `${ALICE},${BOB}` }).DEV_IDENTITY).toBe(BOB);
  });

  it("acts as DEV_IDENTITY by default when it is set beside the list, even when not first", async () => {
    const app = await startTestApp({ DEV_IDENTITY: BOB, DEV_IDENTITIES: `${ALICE},${BOB}` });
    try {
      expect((await as(app.url).post("/orgs", { name: "defaults" })).body).toMatchObject({ created_by: BOB });
      expect((await as(app.url, ALICE).post("/orgs", { name: "alices" })).body).toMatchObject({
        created_by: ALICE,
      });
    } finally {
      await app.close();
    }
  });
});
