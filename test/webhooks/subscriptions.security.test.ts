import { describe, expect, it } from "vitest";
import type { Resolver } from "../../shared/webhooks/guard.ts";
import { api, okBody } from "../support/api.ts";
import { errorOf, expectError, expectOk } from "../support/world.ts";
import { ADMIN, startWebhookApp, useGuardedWebhookApp } from "./support.ts";

/**
 * Who may do what (spec: repo-scoped needs reader or higher; global needs a global admin; list
 * shows one's own, or all to a global admin; delete and resume need the creator or a global admin),
 * and which URLs are refused at creation. This app runs with SVC_WEBHOOK_ALLOW_PRIVATE unset.
 */

// Names for the SSRF cases; anything else goes to the system resolver.
const names: Record<string, string[]> = {
  "internal.quire.test": ["10.1.2.3"],
  "home.quire.test": ["192.168.1.20"],
  "loop.quire.test": ["127.0.0.1"],
  "mixed.quire.test": ["203.0.113.10", "10.0.0.7"],
  "meta.quire.test": ["169.254.169.254"],
  "v6loop.quire.test": ["::1"],
  "public.quire.test": ["203.0.113.10"],
};
const resolve: Resolver = async (host) => {
  const fixed = names[host];
  if (!fixed) {
    const { systemResolver } = await import("../../shared/webhooks/guard.ts");
    return systemResolver(host);
  }
  return fixed.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

const { app, rx, fx } = useGuardedWebhookApp(resolve);

const count = async () =>
  (await app.sql<{ n: number }>("SELECT count(*)::int AS n FROM subscriptions"))[0]!.n;

/** A subscription created straight in the database (URL checks are the API's), as `by`. */
async function seeded(by: string, repo: string | null = fx.repo) {
  const [row] = await app.sql<{ id: string }>(
    `INSERT INTO subscriptions (id, repo, repo_id, backend, url, created_by, suspended_at, failure_count)
     VALUES (gen_random_uuid(), $1, (SELECT id FROM repos WHERE name = $1), 'webhook', $2, $3, now(), 1)
     RETURNING id`,
    [repo, rx.url("/seeded"), by],
  );
  return row!.id;
}

describe("credentials", () => {
  it("every endpoint needs them (401)", async () => {
    const id = await seeded(fx.owner);
    expectError(
      await app.anonymous.post("/subscriptions", {
        backend: "webhook",
        config: { url: "https://x.example/" },
      }),
      401,
      "UNAUTHENTICATED",
    );
    expectError(await app.anonymous.get("/subscriptions"), 401, "UNAUTHENTICATED");
    expectError(await app.anonymous.delete(`/subscriptions/${id}`), 401, "UNAUTHENTICATED");
    expectError(await app.anonymous.post(`/subscriptions/${id}/resume`), 401, "UNAUTHENTICATED");
    const [row] = await app.sql(
      "SELECT suspended_at IS NOT NULL AS suspended FROM subscriptions WHERE id = $1",
      [id],
    );
    expect(row).toEqual({ suspended: true });
  });
});

describe("creating", () => {
  it("a repo subscription needs reader or higher; a repo one may not read answers 404 like a missing one", async () => {
    const before = await count();
    const stranger = app.as("stranger@example.com");
    const body = { repo: fx.repo, backend: "webhook", config: { url: "https://public.quire.test/" } };
    const hidden = await stranger.post("/subscriptions", body);
    const missing = await stranger.post("/subscriptions", { ...body, repo: `${fx.org}/nothing-here` });
    expectError(hidden, 404, "REPO_NOT_FOUND");
    expectError(missing, 404, "REPO_NOT_FOUND");
    expect(errorOf(hidden).error.replace(fx.repo, "X")).toBe(
      errorOf(missing).error.replace(`${fx.org}/nothing-here`, "X"),
    );
    expect(await count()).toBe(before);
  });

  it("an org member (reader through the org) may subscribe to the org's repo", async () => {
    const member = "member@example.com";
    expect((await fx.client.post(`/orgs/${fx.org}/members/${member}`, { role: "member" })).status).toBe(201);
    const res = await api(app.as(member)).post("/subscriptions", {
      body: {
        repo: fx.repo,
        event_types: ["com.svc.org.deleted"], // repo-scoped: never matches; nothing is ever sent
        backend: "webhook",
        config: { url: "https://public.quire.test/hook" },
      },
    });
    expectOk(res, 201);
    expect((await app.as(member).delete(`/subscriptions/${res.body.id}`)).status).toBe(204);
  });

  it("a global subscription needs a global admin (403), even for a repo admin", async () => {
    const before = await count();
    for (const who of [fx.owner, "nobody@example.com"]) {
      expectError(
        await app
          .as(who)
          .post("/subscriptions", { backend: "webhook", config: { url: "https://public.quire.test/" } }),
        403,
        "FORBIDDEN",
      );
    }
    expect(await count()).toBe(before);
  });
});

describe("listing, deleting, resuming", () => {
  it("others' subscriptions are invisible: not listed, and delete and resume answer 404", async () => {
    const mine = await seeded(fx.owner);
    const other = app.as("other@example.com");
    expect(okBody(await api(other).get("/subscriptions")).subscriptions).toEqual([]);
    expectError(await other.delete(`/subscriptions/${mine}`), 404, "SUBSCRIPTION_NOT_FOUND");
    expectError(await other.post(`/subscriptions/${mine}/resume`), 404, "SUBSCRIPTION_NOT_FOUND");
    // A repo admin who did not create it is "other" too.
    const admin = "repo-admin@example.com";
    expect((await fx.client.put(`${fx.base}/roles/${admin}`, { role: "admin" })).status).toBe(200);
    expectError(await app.as(admin).post(`/subscriptions/${mine}/resume`), 404, "SUBSCRIPTION_NOT_FOUND");
    const [row] = await app.sql(
      "SELECT failure_count, suspended_at IS NOT NULL AS s FROM subscriptions WHERE id = $1",
      [mine],
    );
    expect(row).toEqual({ failure_count: 1, s: true });
  });

  it("the creator may resume and delete their own", async () => {
    const mine = await seeded(fx.owner);
    expect((await fx.client.post(`/subscriptions/${mine}/resume`)).status).toBe(204);
    expect((await fx.client.delete(`/subscriptions/${mine}`)).status).toBe(204);
  });

  it("a global admin may list, resume and delete anyone's", async () => {
    const theirs = await seeded(fx.owner);
    const admin = app.as(ADMIN);
    expect(okBody(await api(admin).get("/subscriptions")).subscriptions.map((s) => s.id)).toContain(theirs);
    expect((await admin.post(`/subscriptions/${theirs}/resume`)).status).toBe(204);
    const [row] = await app.sql("SELECT failure_count, suspended_at FROM subscriptions WHERE id = $1", [
      theirs,
    ]);
    expect(row).toEqual({ failure_count: 0, suspended_at: null });
    expect((await admin.delete(`/subscriptions/${theirs}`)).status).toBe(204);
  });
});

describe("URLs refused at creation (SVC_WEBHOOK_ALLOW_PRIVATE unset)", () => {
  const refused = [
    "http://127.0.0.1/hook",
    "http://127.9.9.9/hook",
    "http://localhost/hook",
    "http://LOCALHOST./hook",
    "http://[::1]/hook",
    "http://[::]/hook",
    "http://0.0.0.0/hook",
    "http://2130706433/hook", // 127.0.0.1 in decimal
    "http://0x7f.1/hook", // 127.0.0.1 in hex
    "http://[::ffff:127.0.0.1]/hook",
    "http://[::ffff:7f00:1]/hook",
    "http://10.0.0.1/hook",
    "http://172.16.0.1/hook",
    "http://192.168.1.1/hook",
    "http://100.64.0.1/hook",
    "http://[fc00::1]/hook",
    "http://[fd12:3456::1]/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.1.1/hook",
    "http://[fe80::1]/hook",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:7f00:1::]/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "https://internal.quire.test/hook",
    "https://home.quire.test/hook",
    "https://loop.quire.test/hook",
    "https://mixed.quire.test/hook",
    "https://meta.quire.test/hook",
    "https://v6loop.quire.test/hook",
  ];
  for (const url of refused) {
    it(url, async () => {
      const before = await count();
      const res = await app.as(ADMIN).post("/subscriptions", { backend: "webhook", config: { url } });
      expectError(res, 400, "WEBHOOK_URL_REFUSED");
      expect(await count()).toBe(before);
    });
  }

  it("says why", async () => {
    const res = await app
      .as(ADMIN)
      .post("/subscriptions", { backend: "webhook", config: { url: "https://mixed.quire.test/" } });
    expect(expectError(res, 400, "WEBHOOK_URL_REFUSED")).toContain("10.0.0.7");
  });

  it("a public address is accepted (and nothing is sent to it: no event matches)", async () => {
    const res = await api(fx.client).post("/subscriptions", {
      body: {
        repo: fx.repo,
        event_types: ["com.svc.org.created"],
        backend: "webhook",
        config: { url: "https://public.quire.test/hook" },
      },
    });
    expectOk(res, 201);
    expect((await fx.client.delete(`/subscriptions/${res.body.id}`)).status).toBe(204);
  });
});

describe("with SVC_WEBHOOK_ALLOW_PRIVATE=true", () => {
  it("loopback and private pass; link-local and metadata never do", async () => {
    const dev = await startWebhookApp({ context: { webhooks: { resolve } } });
    try {
      const admin = dev.as(ADMIN);
      const post = (url: string) =>
        api(admin).post("/subscriptions", {
          body: { backend: "webhook", event_types: ["com.svc.org.deleted"], config: { url } },
        });
      for (const url of [
        rx.url("/ok"),
        "http://localhost:1/x",
        "http://[::1]:1/x",
        "http://10.0.0.1/x",
        "https://home.quire.test/x",
      ]) {
        const res = await post(url);
        expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(201);
        expect((await admin.delete(`/subscriptions/${okBody(res).id}`)).status).toBe(204);
      }
      for (const url of [
        "http://169.254.169.254/",
        "http://[fd00:ec2::254]/",
        "http://metadata.google.internal/",
        "https://meta.quire.test/",
        "http://[fe80::1]/",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
      ]) {
        expectError(await post(url), 400, "WEBHOOK_URL_REFUSED");
      }
    } finally {
      await dev.close();
    }
  });
});
