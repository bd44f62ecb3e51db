import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../functions/groups.ts";
import { noFields } from "../../shared/api/strict.ts";
import type { AnyRoute } from "../../shared/http/route.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner } from "../commits/fixtures.ts";
import { ADMIN, startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { errorOf } from "../support/world.ts";

/**
 * Text PostgreSQL cannot store (U+0000, lone UTF-16 surrogates) and bytes that are not UTF-8 are
 * refused at the edge, in every field of every route (docs/errors.md, "Text Quire refuses"): 400
 * naming the field for bodies and queries, 404 for names in the path, never 500, and nothing stored.
 */
const NUL = "a\u0000b";
const SURROGATE = "a\udc00b";

describe("text PostgreSQL cannot store", () => {
  let app: TestApp;
  let fx: RepoFixture;
  beforeAll(async () => {
    app = await startTestApp();
    fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "hello" });
    await createBranch(fx, "feature");
    await commit(fx, "feature", { "b.md": "world" });
  });
  afterAll(() => app.close());

  const commits = async () => (await app.sql("SELECT count(*)::int AS n FROM commits"))[0]?.["n"];

  it.each([
    ["a NUL", NUL, "U+0000"],
    ["a lone surrogate", SURROGATE, "surrogate"],
  ])(
    "refuses a commit message with %s with 400 naming body.message, storing nothing",
    async (_, text, what) => {
      const before = await commits();
      const res = await fx.client.post(`${fx.base}/commit`, {
        branch: "feature",
        message: text,
        files: [{ path: "c.md", content: b64("x") }],
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: "VALIDATION_FAILED", error: expect.stringContaining("body.message") });
      expect(errorOf(res).error).toContain(what);
      expect(await commits()).toBe(before);
    },
  );

  it.each([
    ["a NUL", NUL],
    ["a lone surrogate", SURROGATE],
  ])("refuses a file path with %s with 400 naming body.files.0.path, not storing U+FFFD", async (_, text) => {
    const res = await fx.client.post(`${fx.base}/commit`, {
      branch: "feature",
      message: "m",
      files: [{ path: `${text}.md`, content: b64("x") }],
    });
    expect(res.status).toBe(400);
    expect(errorOf(res).error).toMatch(/^body\.files\.0\.path: /);
    expect(await app.sql("SELECT 1 FROM file_changes WHERE path LIKE '%\uFFFD%'")).toEqual([]);
  });

  it.each([
    ["comment body", "/comment", { branch: "feature", path: "b.md", body: NUL }, "body.body"],
    ["review body", "/review", { branch: "feature", status: "rejected", body: NUL }, "body.body"],
    ["proposal title", "/proposals", { branch: "feature", title: NUL }, "body.title"],
    [
      "proposal description",
      "/proposals",
      { branch: "feature", title: "t", description: SURROGATE },
      "body.description",
    ],
    ["release notes", "/releases", { name: "v1", sequence: 1, notes: NUL }, "body.notes"],
  ])("refuses a %s with NUL or a lone surrogate with 400 naming it", async (_, path, body, field) => {
    const res = await fx.client.post(`${fx.base}${path}`, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: "VALIDATION_FAILED", error: expect.stringContaining(`${field}:`) });
  });

  it("refuses a field name with NUL", async () => {
    const res = await fx.client.post(`${fx.base}/comment`, {
      branch: "feature",
      path: "b.md",
      body: "x",
      [NUL]: 1,
    });
    expect(res.status).toBe(400);
    expect(errorOf(res).error).toMatch(/^body: a field name must not contain U\+0000/);
  });

  it.each([
    [
      "an invalid byte",
      Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    ],
    [
      "an encoded surrogate",
      Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xed, 0xb0, 0x80]), Buffer.from('"}')]),
    ],
  ])("refuses a body that is not UTF-8 (%s) with 400 instead of storing U+FFFD", async (_, bytes) => {
    const res = await app
      .as(ADMIN)
      .raw("POST", "/orgs", { body: bytes, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: "MALFORMED_JSON", error: "the request body is not valid UTF-8" });
  });

  it.each([
    ["%00", "REPO_NOT_FOUND"],
    ["%ED%B0%80", "NOT_FOUND"],
    ["%FF", "NOT_FOUND"],
  ])("answers 404 for a repo name holding %s", async (encoded, code) => {
    const res = await fx.client.get(`/repos/${fx.org}/do${encoded}cs/-/tree`);
    expect(res.status).toBe(404);
    expect(errorOf(res).code).toBe(code);
  });

  it.each([
    ["branch", (e: string) => `${fx.base}/branch/fea${e}ture`, "path.branch", "VALIDATION_FAILED"],
    ["file path", (e: string) => `${fx.base}/file/b${e}.md?branch=feature`, "path.path", "INVALID_PATH"],
    ["org", (e: string) => `/orgs/${fx.org}${e}`, "path.org", "VALIDATION_FAILED"],
    ["release", (e: string) => `${fx.base}/releases/v${e}1`, "path.release_name", "VALIDATION_FAILED"],
  ])("answers a %s name holding an encoded NUL with its own name rule's 400", async (_, url, field, code) => {
    const res = await fx.client.get(url("%00"));
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe(code);
    expect(errorOf(res).error).toMatch(new RegExp(`^${field}: `));
  });

  it.each([
    ["%00", /must be segments/], // the branch-name rule refuses NUL itself, in its own words
    ["%ED%B0%80", /not percent-encoded UTF-8/],
    ["%FF", /not percent-encoded UTF-8/],
  ])("refuses a query value holding %s with 400 naming it", async (encoded, message) => {
    const res = await fx.client.get(`${fx.base}/tree?branch=fea${encoded}ture`);
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toMatch(/^(VALIDATION_FAILED|INVALID_NAME)$/);
    expect(errorOf(res).error).toMatch(/^query\.branch: /);
    expect(errorOf(res).error).toMatch(message);
  });

  it("still reads a query as URLSearchParams does: '+' is a space, a stray '%' stays", async () => {
    const res = await fx.client.get(`${fx.base}/branches?status=50%25+off%zz`);
    expect(res.status).toBe(400); // not a status, but read as "50% off%zz"
    expect(errorOf(res).error).toContain("query.status");
  });

  /** A path for a route's pattern, with plausible values for its parameters. */
  const pathFor = (route: AnyRoute) =>
    route.path
      .replace(":repo*", fx.repo)
      .replace(":org", fx.org)
      .replace(":branch*", "feature")
      .replace(":identity", "ann@example.com")
      .replace(/:id\b/, "00000000-0000-0000-0000-000000000000")
      .replace(":release_name", "v1")
      .replace(":secret", "SOME_SECRET")
      .replace(":number", "1")
      .replace(":comment", "00000000-0000-0000-0000-000000000000");

  /**
   * Top-level field names of a route's body schema: an object, or a union of objects (every
   * option's fields), maybe wrapped in a refinement or a transform.
   */
  type Schema = { shape?: object; _zod?: { def?: { in?: Schema; options?: Schema[] } } };
  const fieldsOf = (route: AnyRoute): string[] => {
    const outer = route.body as Schema;
    const schema = outer.shape ? outer : (outer._zod?.def?.in ?? outer);
    const options = schema._zod?.def?.options ?? [schema];
    return [...new Set(options.flatMap((o) => Object.keys(o.shape ?? o._zod?.def?.in?.shape ?? {})))];
  };

  const signedInBodyRoutes = allRoutes.filter(
    (r) =>
      r.body !== undefined && r.body !== noFields && (r.access === "user" || typeof r.access === "object"),
  );

  it("covers every route with a JSON body that a person calls", () => {
    expect(signedInBodyRoutes.length).toBeGreaterThan(15);
    for (const r of signedInBodyRoutes)
      expect(fieldsOf(r).length, `${r.method} ${r.path}`).toBeGreaterThan(0);
  });

  it.each(
    signedInBodyRoutes.flatMap((r) =>
      fieldsOf(r).map((field) => [`${r.method} ${r.path}`, field, r] as const),
    ),
  )("%s: refuses NUL in body.%s with 400 naming it", async (_, field, route) => {
    for (const text of [NUL, SURROGATE]) {
      const res = await app.as(ADMIN).raw(route.method, pathFor(route), {
        body: JSON.stringify({ [field]: text }),
        headers: { "content-type": "application/json" },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(errorOf(res).error).toMatch(new RegExp(`^body\\.${field}: `));
    }
  });
});
