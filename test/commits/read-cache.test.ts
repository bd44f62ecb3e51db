import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../functions/server.ts";
import { startSecondInstance, startTestApp, type TestApp } from "../support/app.ts";
import { b64, type Client, client } from "../support/client.ts";
import { expectOk, type RepoHandle, world } from "../support/world.ts";
import { commit, createBranch, sha256hex } from "./fixtures.ts";

/**
 * The read cache (shared/commits/read-cache.ts) holds only what never changes; what can change
 * (heads, epochs, roles, the repo itself) is read by every request. Each test warms the first
 * instance's cache, changes the thing through a SECOND instance on the same database, and reads
 * through the first: it must see the change at once, with no message between the instances.
 */

let app: TestApp;
let second: RunningServer;
beforeAll(async () => {
  app = await startTestApp();
  second = await startSecondInstance(app);
});
afterAll(async () => {
  await second?.close();
  await app?.close();
});

/** `identity`'s client on the second instance. */
const onSecond = (identity: string): Client => client(second.url, () => app.idp.token(identity));
/** The repo as its owner sees it through the second instance: for `commit()` and friends. */
const viaSecond = (fx: RepoHandle) => ({ ...fx, client: onSecond(fx.owner) });

const cacheStats = () => app.server.ctx.reads.stats();

async function tree(c: Client, fx: RepoHandle, q = ""): Promise<{ path: string; version_id: string }[]> {
  const res = await c.get(`${fx.base}/tree${q}`);
  expectOk(res, 200);
  return (res.body as { entries: { path: string; version_id: string }[] }).entries;
}

async function fileText(c: Client, fx: RepoHandle, path: string, q = ""): Promise<string> {
  const res = await c.get(`${fx.base}/file/${path}${q}`);
  expectOk(res, 200);
  return Buffer.from((res.body as { content: string }).content, "base64").toString();
}

describe("the read cache across instances", () => {
  it("serves a repeated tree page from the cache", async () => {
    const fx = await world(app).repo();
    await commit(fx, "main", { "a.md": "a" });
    await tree(fx.client, fx);
    const before = cacheStats().hits;
    expect(await tree(fx.client, fx)).toEqual([
      { path: "a.md", version_id: sha256hex("a"), content_type: expect.any(String), binary: false },
    ]);
    expect(cacheStats().hits).toBeGreaterThan(before);
  });

  it("sends a cached tree page as the bytes of its first answer, with the head read anew", async () => {
    const fx = await world(app).repo();
    const first = await commit(fx, "main", { "a.md": "a", "b.md": "b" });
    const token = await app.idp.token(fx.owner);
    const raw = async (q: string) => {
      const res = await fetch(`${app.url}${fx.base}/tree${q}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const text = await res.text();
      expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
      return { text, etag: res.headers.get("etag") };
    };
    const built = await raw("");
    const hits = cacheStats().hits;
    const again = await raw("");
    expect(cacheStats().hits).toBeGreaterThan(hits);
    expect(again).toEqual(built);
    expect(JSON.parse(built.text).entries.map((e: { path: string }) => e.path)).toEqual(["a.md", "b.md"]);
    const next = await commit(viaSecond(fx), "main", { "c.md": "c" });
    const moved = await raw("");
    expect(moved.etag).toBe(`"${next}"`);
    expect(JSON.parse(moved.text).entries.map((e: { path: string }) => e.path)).toEqual([
      "a.md",
      "b.md",
      "c.md",
    ]);
    expect((await raw(`?at=${first}`)).text).toBe(built.text);
  });

  it("a commit through another instance moves the head: the tree and file reads show it at once", async () => {
    const fx = await world(app).repo();
    const first = await commit(fx, "main", { "a.md": "one", "b.md": "b" });
    expect((await tree(fx.client, fx)).map((e) => e.path)).toEqual(["a.md", "b.md"]);
    expect(await fileText(fx.client, fx, "a.md")).toBe("one");
    await commit(viaSecond(fx), "main", { "a.md": "two", "c.md": "c", "b.md": null });
    expect(await tree(fx.client, fx)).toEqual([
      expect.objectContaining({ path: "a.md", version_id: sha256hex("two") }),
      expect.objectContaining({ path: "c.md", version_id: sha256hex("c") }),
    ]);
    expect(await fileText(fx.client, fx, "a.md")).toBe("two");
    const gone = await fx.client.get(`${fx.base}/file/b.md`);
    expect(gone.status).toBe(404);
    // The past stays as it was.
    expect((await tree(fx.client, fx, `?at=${first}`)).map((e) => e.path)).toEqual(["a.md", "b.md"]);
    expect(await fileText(fx.client, fx, "a.md", `?at=${first}`)).toBe("one");
  });

  it("a file's history shows a commit made through another instance", async () => {
    const fx = await world(app).repo();
    await commit(fx, "main", { "h.md": "v1" });
    const history = async () => {
      const res = await fx.client.get(`${fx.base}/file/h.md/history`);
      expectOk(res, 200);
      return (res.body as { entries: { sequence: number }[] }).entries.map((e) => e.sequence);
    };
    const [only] = await history();
    const next = await commit(viaSecond(fx), "main", { "h.md": "v2" });
    expect(await history()).toEqual([next, only]);
  });

  it("a role removed through another instance ends reads at once; one granted starts them", async () => {
    const fx = await world(app).repo();
    await commit(fx, "main", { "a.md": "a" });
    const reader = `reader@${fx.org}.example.com`;
    const stranger = `stranger@${fx.org}.example.com`;
    await fx.grant(reader, "reader");
    await tree(app.as(reader), fx);
    expect((await app.as(stranger).get(`${fx.base}/tree`)).status).toBe(404);
    const owner = onSecond(fx.owner);
    expectOk(await owner.delete(`/repos/${fx.repo}/-/roles/${reader}`), [200, 204]);
    expectOk(await owner.put(`/repos/${fx.repo}/-/roles/${stranger}`, { role: "reader" }), 200);
    expect((await app.as(reader).get(`${fx.base}/tree`)).status).toBe(404);
    expect((await app.as(reader).get(`${fx.base}/file/a.md`)).status).toBe(404);
    expect((await tree(app.as(stranger), fx)).map((e) => e.path)).toEqual(["a.md"]);
  });

  it("a branch rebased through another instance shows main's new files (a new epoch)", async () => {
    const fx = await world(app).repo();
    await commit(fx, "main", { "a.md": "a" });
    await createBranch(fx, "feature");
    const before = await commit(fx, "feature", { "f.md": "f" });
    expect((await tree(fx.client, fx, "?branch=feature")).map((e) => e.path)).toEqual(["a.md", "f.md"]);
    await commit(fx, "main", { "m.md": "m" });
    expect((await tree(fx.client, fx, "?branch=feature")).map((e) => e.path)).toEqual(["a.md", "f.md"]);
    const owner = onSecond(fx.owner);
    expectOk(await owner.post(`/repos/${fx.repo}/-/rebase`, { branch: "feature" }), 200);
    expect((await tree(fx.client, fx, "?branch=feature")).map((e) => e.path)).toEqual([
      "a.md",
      "f.md",
      "m.md",
    ]);
    expect(await fileText(fx.client, fx, "m.md", "?branch=feature")).toBe("m");
    // Before the rebase the branch did not have it: the older epoch, not the one at the head.
    expect((await fx.client.get(`${fx.base}/file/m.md?branch=feature&at=${before}`)).status).toBe(404);
    expect(await fileText(fx.client, fx, "f.md", `?branch=feature&at=${before}`)).toBe("f");
  });

  it("a repo deleted and made again under its name through another instance reads as the new one", async () => {
    const fx = await world(app).repo();
    await commit(fx, "main", { "old.md": "old" });
    expect((await tree(fx.client, fx)).map((e) => e.path)).toEqual(["old.md"]);
    expect(await fileText(fx.client, fx, "old.md")).toBe("old");
    const owner = onSecond(fx.owner);
    expectOk(await owner.delete(`/repos/${fx.repo}`), [200, 204]);
    expect((await fx.client.get(`${fx.base}/tree`)).status).toBe(404);
    expectOk(await owner.post("/repos", { owner: fx.org, name: fx.repo }), 201);
    expect(await tree(fx.client, fx)).toEqual([]);
    await owner.post(`/repos/${fx.repo}/-/commit`, {
      branch: "main",
      message: "again",
      files: [{ path: "old.md", content: b64("new") }],
    });
    expect(await fileText(fx.client, fx, "old.md")).toBe("new");
  });
});
