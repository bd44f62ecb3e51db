import { describe, expect, it } from "vitest";
import { liveScript, styles } from "../../functions/web/assets.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";

const app = useFixture(startTestApp);

/** The rules of the web group over plain HTTP (no browser): redirects, assets, errors, forms. */
describe("web pages over HTTP", () => {
  it("redirects / to /ui/ without credentials", async () => {
    const res = await fetch(`${app.url}/`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/ui/");
  });

  it("serves the stylesheet and the live script by content hash, cached for good, and nothing else", async () => {
    for (const asset of [styles, liveScript]) {
      const res = await fetch(app.url + asset.path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(asset.contentType);
      expect(res.headers.get("cache-control")).toContain("immutable");
      expect(Buffer.from(await res.arrayBuffer())).toEqual(asset.body);
    }
    const stale = await fetch(`${app.url}/ui/static/000000000000/app.css`);
    expect(stale.status).toBe(404);
  });

  it("answers a missing file with an HTML page to a browser and the JSON error to an API client", async () => {
    const repo = await world(app).repo();
    await repo.commit("main", { "a.md": "a" });
    const token = await app.idp.token(repo.owner);
    const path = `${app.url}/ui/repos/${repo.repo}/-/file/missing.md`;
    const page = await fetch(path, { headers: { authorization: `Bearer ${token}`, accept: "text/html" } });
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await page.text()).toContain("FILE_NOT_FOUND");
    const api = await fetch(path, { headers: { authorization: `Bearer ${token}` } });
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: "FILE_NOT_FOUND" });
  });

  it("answers a repo the caller cannot see, refused before the page runs, with an HTML page too", async () => {
    const repo = await world(app).repo();
    const stranger = await app.idp.token("stranger@quire.test");
    for (const path of [
      `/ui/repos/${repo.repo}/-/tree`,
      "/ui/repos/no/such/-/tree",
      "/ui/repos/x/-/tree?at=-1",
    ]) {
      const page = await fetch(app.url + path, {
        headers: { authorization: `Bearer ${stranger}`, accept: "text/html" },
      });
      expect(page.status, path).toBeGreaterThanOrEqual(400);
      expect(page.headers.get("content-type"), path).toBe("text/html; charset=utf-8");
      expect(page.headers.get("x-request-id"), path).toBeTruthy();
      expect(await page.text(), path).toMatch(/NOT_FOUND|VALIDATION_FAILED/);
      const api = await fetch(app.url + path, { headers: { authorization: `Bearer ${stranger}` } });
      expect(api.headers.get("content-type"), path).toContain("application/json");
    }
  });

  it("refuses a review post that is not a form, or has unknown fields, changing nothing", async () => {
    const repo = await world(app).repo();
    await repo.branch("b", { files: { "a.md": "a" } });
    const token = await app.idp.token(repo.owner);
    const url = `${app.url}/ui/repos/${repo.repo}/-/branch/b/review`;
    const json = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ status: "rejected" }),
    });
    expect(json.status).toBe(400);
    const extra = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
      body: "status=rejected&admin=1",
    });
    expect(extra.status).toBe(400);
    expect((await repo.client.get(`${repo.base}/branch/b/reviews`)).body).toEqual([]);
  });
});
