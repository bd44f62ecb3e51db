import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { b64, type Res } from "../support/client.ts";
import { errorOf, expectOk, useFixture } from "../support/world.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner } from "./fixtures.ts";

const app = useFixture(startTestApp);

/**
 * Conditional requests (issue 17, docs/api.md "Conditional commits"): a branch's entity tag is its
 * head sequence in quotes; GET branch and GET tree send it as ETag; a commit honours If-Match
 * against it (412 PRECONDITION_FAILED when stale). Any other precondition on a write is refused
 * with 400, never ignored.
 */

const send = (
  fx: RepoFixture,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: object,
) =>
  fx.client.raw(method, path, {
    headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

const commitWith = (fx: RepoFixture, headers: Record<string, string>, branch = "main", text = "x") =>
  send(fx, "POST", `${fx.base}/commit`, headers, {
    branch,
    message: "conditional",
    files: [{ path: "a.md", content: b64(text) }],
  });

const commitCount = async (fx: RepoFixture) =>
  (await app.sql<{ n: number }>("SELECT count(*)::int AS n FROM commits WHERE repo_id = $1", [fx.repoId]))[0]
    ?.n;

const etagOf = (res: Res) => res.headers.get("etag");

describe("If-Match on a commit", () => {
  it("writes when it names the head's ETag, as GET branch and GET tree give it", async () => {
    const fx = await repoWithOwner(app);
    const head = await commit(fx, "main", { "a.md": "1" });
    const branch = await fx.client.get(`${fx.base}/branch/main`);
    const tree = await fx.client.get(`${fx.base}/tree?branch=main`);
    expect(etagOf(branch)).toBe(`"${head}"`);
    expect(etagOf(tree)).toBe(`"${head}"`);
    const res = await commitWith(fx, { "if-match": etagOf(branch) ?? "" });
    expectOk(res, 201);
    expect(etagOf(await fx.client.get(`${fx.base}/branch/main`))).toBe(`"${head + 1}"`);
    // A list matches when any tag does; * matches an existing branch.
    expectOk(await commitWith(fx, { "if-match": `"1000", "${head + 1}"` }, "main", "y"), 201);
    expectOk(await commitWith(fx, { "if-match": "*" }, "main", "z"), 201);
  });

  it("answers 412 PRECONDITION_FAILED with the head when stale, and writes nothing", async () => {
    const fx = await repoWithOwner(app);
    const first = await commit(fx, "main", { "a.md": "1" });
    const head = await commit(fx, "main", { "a.md": "2" });
    const before = await commitCount(fx);
    for (const stale of [`"${first}"`, `W/"${head}"`, `"${first}", "0"`]) {
      const res = await commitWith(fx, { "if-match": stale });
      expect(res.status, stale).toBe(412);
      expect(errorOf(res)).toMatchObject({ code: "PRECONDITION_FAILED", head_sequence: head });
    }
    expect(await commitCount(fx)).toBe(before);
  });

  it("is checked against the branch the commit names", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "1" });
    await createBranch(fx, "side");
    const side = await commit(fx, "side", { "s.md": "s" });
    const mainTag = etagOf(await fx.client.get(`${fx.base}/branch/main`)) ?? "";
    expect((await commitWith(fx, { "if-match": mainTag }, "side")).status).toBe(412);
    expectOk(await commitWith(fx, { "if-match": `"${side}"` }, "side"), 201);
  });

  it("refuses a header that is not * or entity tags with 400", async () => {
    const fx = await repoWithOwner(app);
    const head = await commit(fx, "main", { "a.md": "1" });
    for (const bad of [String(head), `"${head}`, "", "abc"]) {
      const res = await commitWith(fx, { "if-match": bad });
      expect(res.status, bad).toBe(400);
      expect(errorOf(res).error).toMatch(/If-Match/);
    }
    expect(await commitCount(fx)).toBe(1);
  });

  it("sends no head ETag for a tree read at a past sequence", async () => {
    const fx = await repoWithOwner(app);
    const first = await commit(fx, "main", { "a.md": "1" });
    await commit(fx, "main", { "a.md": "2" });
    expect(etagOf(await fx.client.get(`${fx.base}/tree?branch=main&at=${first}`))).toBeNull();
  });
});

describe("preconditions a write does not evaluate", () => {
  it.each([
    ["If-None-Match", "*"],
    ["If-Unmodified-Since", "Tue, 01 Jan 2030 00:00:00 GMT"],
    ["If-Modified-Since", "Tue, 01 Jan 2030 00:00:00 GMT"],
    ["If-Range", '"1"'],
  ])("%s on a commit is refused with 400, naming it, and nothing is written", async (header, value) => {
    const fx = await repoWithOwner(app);
    const res = await commitWith(fx, { [header.toLowerCase()]: value });
    expect(res.status).toBe(400);
    expect(errorOf(res).error).toContain(`header ${header}:`);
    expect(await commitCount(fx)).toBe(0);
  });

  it("If-Match on a write that does not honour it (branch create; Unmodified-Since on repo delete) is refused with 400", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "1" });
    const create = await send(fx, "POST", `${fx.base}/branch`, { "if-match": '"1"' }, { name: "b" });
    expect(create.status).toBe(400);
    expect(errorOf(create).error).toContain("header If-Match:");
    expect(await app.sql("SELECT 1 FROM branches WHERE repo_id = $1 AND name = 'b'", [fx.repoId])).toEqual(
      [],
    );
    const remove = await send(fx, "DELETE", `/repos/${fx.repo}`, {
      "if-unmodified-since": "Tue, 01 Jan 2030 00:00:00 GMT",
    });
    expect(remove.status).toBe(400);
    expect(await app.sql("SELECT 1 FROM repos WHERE id = $1", [fx.repoId])).toHaveLength(1);
  });
});
