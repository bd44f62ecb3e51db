import http from "node:http";
import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";

/**
 * Every reply of the web group carries the pages' security headers (docs/web.md, "Safety"):
 * unknown paths under /ui/, wrong methods, a page's own refusals, HEAD, redirects and sign-in's
 * refusals; a browser gets each refusal as a page. Paths of the API keep their plain JSON.
 */

const app = useFixture(startTestApp);
const HTML = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };

async function asOwner(): Promise<{ auth: Record<string, string>; repo: string }> {
  const repo = await world(app).repo();
  return { auth: { authorization: `Bearer ${await app.idp.token(repo.owner)}` }, repo: repo.repo };
}

const send = (method: string, path: string, headers: Record<string, string> = {}) =>
  fetch(app.url + path, { method, headers, redirect: "manual" });

function expectSecurityHeaders(res: Response, what: string): void {
  expect(res.headers.get("content-security-policy"), what).toMatch(
    /default-src 'none'.*frame-ancestors 'none'/,
  );
  expect(res.headers.get("x-frame-options"), what).toBe("DENY");
  expect(res.headers.get("x-content-type-options"), what).toBe("nosniff");
  expect(res.headers.get("referrer-policy"), what).toBe("same-origin");
}

async function expectPage(res: Response, status: number, code: string, what: string): Promise<void> {
  expect(res.status, what).toBe(status);
  expectSecurityHeaders(res, what);
  expect(res.headers.get("content-type"), what).toBe("text/html; charset=utf-8");
  const text = await res.text();
  expect(text, what).toMatch(/^<!doctype html>/i);
  expect(text, what).toContain(code);
}

async function expectJson(res: Response, status: number, code: string, what: string): Promise<void> {
  expect(res.status, what).toBe(status);
  expectSecurityHeaders(res, what);
  expect(res.headers.get("content-type"), what).toMatch(/^application\/json/);
  expect(((await res.json()) as { code: string }).code, what).toBe(code);
}

describe("the web group's replies", () => {
  it("an unknown path under /ui/: a page for a browser, JSON for a client, both with the headers", async () => {
    const { auth } = await asOwner();
    for (const path of ["/ui/nope", "/ui/repos", "/ui/orgs/a/b/c", "/ui/static/x"]) {
      await expectPage(await send("GET", path, { ...auth, ...HTML }), 404, "NOT_FOUND", path);
      await expectJson(await send("GET", path, auth), 404, "NOT_FOUND", path);
    }
    // Without credentials too: nothing there to sign in for.
    await expectPage(await send("GET", "/ui/nope", HTML), 404, "NOT_FOUND", "anonymous");
  });

  it("a wrong method on a page: 405 with Allow, a page for a browser", async () => {
    const { auth, repo } = await asOwner();
    for (const [method, path] of [
      ["POST", "/"],
      ["POST", "/ui/"],
      ["DELETE", "/ui/"],
      ["PUT", `/ui/repos/${repo}/-/tree`],
      ["POST", `/ui/repos/${repo}/-/history`],
    ] as const) {
      const what = `${method} ${path}`;
      const page = await send(method, path, { ...auth, ...HTML });
      expect(page.headers.get("allow"), what).toBe("GET, HEAD");
      await expectPage(page, 405, "METHOD_NOT_ALLOWED", what);
      const json = await send(method, path, auth);
      expect(json.headers.get("allow"), what).toBe("GET, HEAD");
      await expectJson(json, 405, "METHOD_NOT_ALLOWED", what);
    }
    // A form's path refuses GET the same way.
    const merge = await send("GET", `/ui/repos/${repo}/-/branch/main/merge`, { ...auth, ...HTML });
    expect(merge.headers.get("allow")).toBe("POST");
    await expectPage(merge, 405, "METHOD_NOT_ALLOWED", "GET merge");
  });

  it("a page's own 404 and 400, as a page and as JSON", async () => {
    const { auth, repo } = await asOwner();
    const missing = `/ui/repos/${repo}-missing/-/tree`;
    await expectPage(await send("GET", missing, { ...auth, ...HTML }), 404, "REPO_NOT_FOUND", missing);
    await expectJson(await send("GET", missing, auth), 404, "REPO_NOT_FOUND", missing);
    const bad = `/ui/repos/${repo}/-/tree?at=-1`;
    await expectPage(await send("GET", bad, { ...auth, ...HTML }), 400, "VALIDATION_FAILED", bad);
    await expectJson(await send("GET", bad, auth), 400, "VALIDATION_FAILED", bad);
  });

  it("HEAD of a page: the GET's status and headers, no body; of an unknown page: 404 with the headers", async () => {
    const { auth, repo } = await asOwner();
    for (const path of ["/ui/", `/ui/repos/${repo}/-/tree`]) {
      const get = await send("GET", path, { ...auth, ...HTML });
      const head = await send("HEAD", path, { ...auth, ...HTML });
      expect(head.status, path).toBe(200);
      expectSecurityHeaders(head, path);
      expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"));
      expect(await head.text(), path).toBe("");
    }
    const unknown = await send("HEAD", "/ui/nope", { ...auth, ...HTML });
    expect(unknown.status).toBe(404);
    expectSecurityHeaders(unknown, "HEAD /ui/nope");
  });

  it("redirects and sign-in's refusals carry the headers too", async () => {
    expectSecurityHeaders(await send("GET", "/", HTML), "GET /");
    const toSignIn = await send("GET", "/ui/", HTML);
    expect(toSignIn.status).toBe(302);
    expectSecurityHeaders(toSignIn, "sign-in redirect");
    await expectJson(
      await send("GET", "/auth/callback?code=x&state=y"),
      400,
      "VALIDATION_FAILED",
      "callback",
    );
    await expectJson(await send("GET", "/auth/login?next=x"), 400, "VALIDATION_FAILED", "login");
    await expectJson(await send("POST", "/auth/login"), 405, "METHOD_NOT_ALLOWED", "POST /auth/login");
    // A browser sees sign-in's refusals as pages.
    const page = await send("GET", "/auth/login?next=x", HTML);
    expect(page.status).toBe(400);
    expectSecurityHeaders(page, "login page");
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain("Sign-in refused");
    // HEAD would start (or spend) a sign-in: not answered.
    expect((await send("HEAD", "/auth/login")).status).toBe(405);
  });

  it("a form post too large to read: 413 as a page with the headers", async () => {
    // Only the declared length is sent: the server refuses it before reading any body.
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(`${app.url}/ui/`, {
        method: "POST",
        headers: { ...HTML, "content-length": String(1024 * 1024 * 1024) },
      });
      req.on("response", resolve);
      req.on("error", reject);
      req.flushHeaders();
    });
    res.resume();
    expect(res.statusCode).toBe(413);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers["content-security-policy"]).toMatch(/default-src 'none'/);
    expect(res.headers["x-frame-options"]).toBe("DENY");
  });

  it("API paths elsewhere keep plain JSON refusals, without the pages' headers", async () => {
    const { auth } = await asOwner();
    for (const [method, path] of [
      ["GET", "/nope"],
      ["GET", "/orgs/nope-such-org"],
      ["DELETE", "/orgs"],
    ] as const) {
      const res = await send(method, path, { ...auth, ...HTML });
      expect(res.headers.get("content-type"), path).toMatch(/^application\/json/);
      expect(res.headers.get("content-security-policy"), path).toBeNull();
    }
    expect((await send("HEAD", "/orgs", auth)).status).toBe(405);
  });
});
