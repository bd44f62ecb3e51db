import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { allRoutes } from "../../functions/groups.ts";
import { webhookDeliveryRoutes } from "../../functions/webhook-delivery/routes.ts";
import { errorBody } from "../../shared/http/responses.ts";
import type { AnyRoute } from "../../shared/http/route.ts";
import { repoWithOwner } from "../commits/fixtures.ts";
import { api, okBody } from "../support/api.ts";
import { ADMIN, startTestApp, type TestApp } from "../support/app.ts";
import { b64, type Client, type Res } from "../support/client.ts";
import { errorOf } from "../support/world.ts";

/**
 * Every request schema refuses what it does not know (docs/api.md, "Unknown fields"): a field or
 * query parameter Quire ignored would let a client believe it was obeyed (the origin SDK's
 * `Merge({DryRun: true})` merged for real). Two checks that a new route cannot slip past: every
 * object in every body and query schema is strict, and over HTTP every route with a body refuses
 * a valid-shaped body plus one unknown field with 400 naming only that field.
 */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const key = (r: AnyRoute) => `${r.method} ${r.path}`;

/** The object schemas in `schema` (through wrappers, pipes, arrays, unions) that are not strict. */
function looseObjects(schema: z.ZodType, at: string, seen = new Set<unknown>()): string[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  const found: string[] = [];
  if (def["type"] === "object") {
    const catchall = def["catchall"] as { _zod: { def: { type: string } } } | undefined;
    if (catchall?._zod.def.type !== "never") found.push(at);
    for (const [name, field] of Object.entries(def["shape"] as Record<string, z.ZodType>))
      found.push(...looseObjects(field, `${at}.${name}`, seen));
    return found;
  }
  const isSchema = (v: unknown): v is z.ZodType => typeof v === "object" && v !== null && "_zod" in v;
  for (const value of Object.values(def)) {
    for (const inner of Array.isArray(value) ? value : [value])
      if (isSchema(inner)) found.push(...looseObjects(inner, at, seen));
  }
  return found;
}

describe("every request schema is strict", () => {
  const routes = [...allRoutes, ...webhookDeliveryRoutes];

  it("has no object schema, at any depth, that lets unknown keys through", () => {
    const loose = routes.flatMap((r) => [
      ...(r.body ? looseObjects(r.body, `${key(r)} body`) : []),
      ...(r.query ? looseObjects(r.query, `${key(r)} query`) : []),
    ]);
    expect(loose).toEqual([]);
  });

  it("finds a loose object where there is one (the walk itself works)", async () => {
    const { z } = await import("zod");
    const schema = z.strictObject({ a: z.array(z.object({ b: z.string() })).optional() });
    expect(
      looseObjects(
        schema.transform((x) => x),
        "s",
      ),
    ).toEqual(["s.a"]);
  });
});

// Routes a person's ID token cannot reach: CI request tokens and worker identities are checked
// before the body is read (test/ci covers those bodies; the walk above covers their schemas).
const notForPeople = new Set(["requestToken", "worker"]);

/** A valid-shaped body for every route that takes one; a new route must add its own. */
const validBodies: Record<string, (fx: { org: string }) => Record<string, unknown>> = {
  "POST /orgs": () => ({ name: "strict-org" }),
  "POST /orgs/:org/members/:identity": () => ({ role: "member" }),
  "POST /orgs/:org/invites": () => ({ email: "someone@example.com", role: "member" }),
  "POST /orgs/:org/invites/:token/accept": () => ({}),
  "POST /repos": ({ org }) => ({ owner: org, name: "other" }),
  "PUT /repos/:repo*/-/roles/:identity": () => ({ role: "reader" }),
  "PUT /repos/:repo*/-/secrets/:secret": () => ({ value: "v" }),
  "POST /repos/:repo*/-/review": () => ({ branch: "main", status: "approved", body: "" }),
  "POST /repos/:repo*/-/check": () => ({ branch: "main", check_name: "ci/lint", status: "passed" }),
  "POST /repos/:repo*/-/comment": () => ({ branch: "main", path: "a.md", body: "hi" }),
  "POST /repos/:repo*/-/branch": () => ({ name: "feature" }),
  "PATCH /repos/:repo*/-/branch/:branch*": () => ({ draft: false }),
  "POST /repos/:repo*/-/commit": () => ({
    branch: "main",
    message: "m",
    files: [{ path: "a.md", content: b64("a"), content_type: "text/markdown" }],
  }),
  "POST /repos/:repo*/-/checkpoint/cosignatures": () => ({ witness_key: "w+00000000+AA==", checkpoint: "x" }),
  "POST /repos/:repo*/-/proposals": () => ({ branch: "feature", title: "t" }),
  "PATCH /repos/:repo*/-/proposals/:id": () => ({ title: "t" }),
  "POST /repos/:repo*/-/proposals/:id/close": () => ({}),
  "POST /repos/:repo*/-/issues": () => ({ title: "t" }),
  "PATCH /repos/:repo*/-/issues/:number": () => ({ title: "t" }),
  "POST /repos/:repo*/-/issues/:number/close": () => ({}),
  "POST /repos/:repo*/-/issues/:number/reopen": () => ({}),
  "POST /repos/:repo*/-/issues/:number/comments": () => ({ body: "b" }),
  "POST /repos/:repo*/-/issues/:number/refs": () => ({ ref_type: "commit", ref_id: "1" }),
  "PATCH /repos/:repo*/-/issues/:number/comments/:comment": () => ({ body: "b" }),
  "POST /repos/:repo*/-/releases": () => ({ name: "v1", sequence: 1, notes: "" }),
  "POST /repos/:repo*/-/merge": () => ({ branch: "feature", dry_run: true }),
  "POST /repos/:repo*/-/rebase": () => ({ branch: "feature" }),
  "POST /repos/:repo*/-/purge": () => ({ older_than: "720h", dry_run: true }),
  "POST /repos/:repo*/-/ci/run": () => ({ branch: "main" }),
  "POST /subscriptions": () => ({ backend: "webhook", config: { url: "https://example.com/hook" } }),
  "POST /subscriptions/:id/resume": () => ({}),
};

const UUID = "00000000-0000-4000-8000-000000000000";

/** The route's path with a valid value in each parameter. */
function pathOf(r: AnyRoute, fx: { org: string; repo: string }): string {
  const values: Record<string, string> = {
    repo: fx.repo,
    branch: "main",
    path: "a.md",
    sequence: "1",
    org: fx.org,
    identity: "someone@example.com",
    token: "t".repeat(24),
    release_name: "v1",
    secret: "SOME_SECRET",
    check: "ci/lint",
    id: UUID,
    number: "1",
    comment: UUID,
  };
  return r.path.replace(/:(\w+)\*?/g, (_, name: string) => values[name] ?? name);
}

const send = (client: Client, r: AnyRoute, path: string, body: unknown) =>
  client.raw(r.method, path, {
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });

/** A reply as a row of a table of answers: its status, and its error's code and message if it is one. */
const answer = (res: Res): unknown[] => {
  const error = errorBody.safeParse(res.body);
  return error.success ? [res.status, error.data.code, error.data.error] : [res.status, res.body];
};

describe("over HTTP, an unknown field or query parameter is refused with 400 naming it", () => {
  const bodyRoutes = allRoutes.filter((r) => r.body && !notForPeople.has(r.access as string));

  it("has a valid-shaped body for every route that takes one", () => {
    expect(bodyRoutes.map(key).filter((k) => !(k in validBodies))).toEqual([]);
  });

  it("refuses a valid body plus zzz_unknown on every route, naming only that field", async () => {
    const fx = await repoWithOwner(app);
    const admin = app.as(ADMIN);
    const answers: Record<string, unknown> = {};
    for (const r of bodyRoutes) {
      const body = { ...validBodies[key(r)]?.(fx), zzz_unknown: 1 };
      const res = await send(admin, r, pathOf(r, fx), body);
      answers[key(r)] = answer(res);
    }
    const expected = Object.fromEntries(
      bodyRoutes.map((r) => [key(r), [400, "VALIDATION_FAILED", "body.zzz_unknown: unknown field"]]),
    );
    expect(answers).toEqual(expected);
    // Nothing was done: the refused bodies were valid apart from the unknown field.
    expect(await app.sql("SELECT name FROM repos WHERE owner = $1", [fx.org])).toEqual([{ name: fx.repo }]);
  });

  it("names unknown fields of nested objects by their path", async () => {
    const fx = await repoWithOwner(app);
    const commit = await fx.client.post(`${fx.base}/commit`, {
      branch: "main",
      message: "m",
      files: [{ path: "a.md", content: b64("a"), zzz_unknown: true, mode: "100644" }],
    });
    expect(commit.status).toBe(400);
    expect(errorOf(commit).error).toBe(
      "body.files.0.zzz_unknown: unknown field; body.files.0.mode: unknown field",
    );
    const sub = await fx.client.post("/subscriptions", {
      repo: fx.repo,
      backend: "webhook",
      config: { url: "https://example.com/hook", content_type: "json" },
    });
    expect(sub.status).toBe(400);
    expect(errorOf(sub).error).toBe("body.config.content_type: unknown field");
  });

  it("refuses an unknown query parameter on every GET route, with or without a query schema", async () => {
    const fx = await repoWithOwner(app);
    const admin = app.as(ADMIN);
    const gets = allRoutes.filter((r) => r.method === "GET" && !notForPeople.has(r.access as string));
    const answers: Record<string, unknown> = {};
    // Routes whose query has a required parameter get it, so the unknown one is the only fault.
    const required: Record<string, string> = {
      "GET /repos/:repo*/-/chain": "to=1&",
      "GET /repos/:repo*/-/proof/inclusion": "sequence=1&size=1&",
      "GET /repos/:repo*/-/proof/consistency": "from=1&to=1&",
      "GET /repos/:repo*/-/attestations": "branch=main&",
      "GET /repos/:repo*/-/diff": "branch=main&",
      "GET /repos/:repo*/-/search": "q=hello&",
      "GET /ui/repos/:repo*/-/search": "q=hello&",
      "GET /ui/repos/:repo*/-/ci/:run/tail/:check*": "after=0&",
    };
    for (const r of gets) {
      const res = await admin.get(`${pathOf(r, fx)}?${required[key(r)] ?? ""}zzz_unknown=1`);
      answers[key(r)] = answer(res);
    }
    const expected = Object.fromEntries(
      gets.map((r) => [key(r), [400, "VALIDATION_FAILED", "query.zzz_unknown: unknown query parameter"]]),
    );
    expect(answers).toEqual(expected);
  });

  it("still takes a route's own query parameters and an empty body where none is read", async () => {
    const fx = await repoWithOwner(app);
    expect((await fx.client.get(`${fx.base}/tree?branch=main&limit=5`)).status).toBe(200);
    const opened = await fx.client.post(`${fx.base}/branch`, { name: "p" });
    expect(opened.status).toBe(201);
    const proposal = okBody(
      await api(fx.client).post("/repos/:repo*/-/proposals", {
        params: { repo: fx.repo },
        body: { branch: "p", title: "t" },
      }),
    );
    const close = await fx.client.raw("POST", `${fx.base}/proposals/${proposal.id}/close`);
    expect(close.status, JSON.stringify(close.body)).toBe(200);
  });
});
