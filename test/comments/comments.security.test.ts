import { beforeAll, describe, expect, it } from "vitest";
import { branch, state, team } from "../reviews/fixtures.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, grant, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);
const t = useFixture(() => team(app));
beforeAll(async () => {
  await branch(t, "feat");
});

const add = async (who: string, body = "x") => {
  const res = await t.as(who).post(`${t.base}/comment`, { branch: "feat", path: "a.md", body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
};
const ids = async () =>
  (await t.client.get(`${t.base}/branch/feat/comments`)).body.comments.map((c: { id: string }) => c.id);

describe("who may comment", () => {
  it("needs writer: a reader gets 403, a stranger 404, no credentials 401; nothing changes", async () => {
    const body = { branch: "feat", path: "a.md", body: "x" };
    const before = await state(t);
    expectError(await t.as(t.reader).post(`${t.base}/comment`, body), 403, "FORBIDDEN");
    expectError(await t.as(t.stranger).post(`${t.base}/comment`, body), 404, "REPO_NOT_FOUND");
    expectError(await app.anonymous.post(`${t.base}/comment`, body), 401, "UNAUTHENTICATED");
    expect(await state(t)).toEqual(before);
  });

  it("lets a reader list comments; a stranger gets 404 and no credentials 401", async () => {
    expect((await t.as(t.reader).get(`${t.base}/branch/feat/comments`)).status).toBe(200);
    expectError(await t.as(t.stranger).get(`${t.base}/branch/feat/comments`), 404, "REPO_NOT_FOUND");
    expectError(await app.anonymous.get(`${t.base}/branch/feat/comments`), 401, "UNAUTHENTICATED");
  });

  it("the author is always the caller: an author in the body is refused, naming it", async () => {
    const before = await state(t);
    const res = await t
      .as(t.writer)
      .post(`${t.base}/comment`, { branch: "feat", path: "a.md", body: "x", author: t.maintainer });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error).toBe("body.author: unknown field");
    expect(await state(t)).toEqual(before);
    const mine = await t.as(t.writer).post(`${t.base}/comment`, { branch: "feat", path: "a.md", body: "x" });
    expect(mine.body.author).toBe(t.writer);
  });
});

describe("who may delete a comment", () => {
  it("a writer cannot delete another writer's comment: 403, and it stays", async () => {
    const id = await add(t.writer2);
    const before = await state(t);
    expectError(await t.as(t.writer).delete(`${t.base}/comment/${id}`), 403, "FORBIDDEN");
    expect(await state(t)).toEqual(before);
    expect(await ids()).toContain(id);
  });

  it("a writer cannot delete a maintainer's comment either", async () => {
    const id = await add(t.maintainer);
    expectError(await t.as(t.writer).delete(`${t.base}/comment/${id}`), 403, "FORBIDDEN");
    expect(await ids()).toContain(id);
  });

  it("a reader cannot delete any comment (403), a stranger gets 404, no credentials 401", async () => {
    const id = await add(t.writer);
    const before = await state(t);
    expectError(await t.as(t.reader).delete(`${t.base}/comment/${id}`), 403, "FORBIDDEN");
    expectError(await t.as(t.stranger).delete(`${t.base}/comment/${id}`), 404, "REPO_NOT_FOUND");
    expectError(await app.anonymous.delete(`${t.base}/comment/${id}`), 401, "UNAUTHENTICATED");
    expect(await state(t)).toEqual(before);
  });

  it("an author demoted to reader can no longer delete their own comment", async () => {
    const who = `demoted-${Date.now()}@example.com`;
    await grant(t, who, "writer");
    const id = await add(who);
    await grant(t, who, "reader");
    expectError(await t.as(who).delete(`${t.base}/comment/${id}`), 403, "FORBIDDEN");
    expect(await ids()).toContain(id);
  });

  it("the author matches whatever case the token's email uses", async () => {
    const id = await add(t.writer);
    expect((await t.as(t.writer.toUpperCase()).delete(`${t.base}/comment/${id}`)).status).toBe(204);
  });

  it("a maintainer deletes another's comment", async () => {
    const id = await add(t.writer);
    expect((await t.as(t.maintainer).delete(`${t.base}/comment/${id}`)).status).toBe(204);
    expect(await ids()).not.toContain(id);
  });
});
