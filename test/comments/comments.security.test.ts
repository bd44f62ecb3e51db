import { beforeAll, describe, expect, it } from "vitest";
import { branch, state, team } from "../reviews/fixtures.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, expectOk, grant, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);
const t = useFixture(() => team(app));
beforeAll(async () => {
  await branch(t, "feat");
});

const add = async (who: string, body = "x") => {
  const res = await api(t.as(who)).post("/repos/:repo*/-/comment", {
    params: { repo: t.repo },
    body: { branch: "feat", path: "a.md", body },
  });
  expectOk(res, 201);
  return res.body.id as string;
};
const ids = async () =>
  okBody(
    await api(t.client).get("/repos/:repo*/-/branch/:branch*/comments", {
      params: { repo: t.repo, branch: "feat" },
    }),
  ).comments.map((c: { id: string }) => c.id);

describe("who may comment", () => {
  it("needs writer: a reader gets 403, a stranger 404, no credentials 401; nothing changes", async () => {
    const body = { branch: "feat", path: "a.md", body: "x" };
    const before = await state(t);
    expectError(
      await api(t.as(t.reader)).post("/repos/:repo*/-/comment", { params: { repo: t.repo }, body }),
      403,
      "FORBIDDEN",
    );
    expectError(
      await api(t.as(t.stranger)).post("/repos/:repo*/-/comment", { params: { repo: t.repo }, body }),
      404,
      "REPO_NOT_FOUND",
    );
    expectError(
      await api(app.anonymous).post("/repos/:repo*/-/comment", { params: { repo: t.repo }, body }),
      401,
      "UNAUTHENTICATED",
    );
    expect(await state(t)).toEqual(before);
  });

  it("lets a reader list comments; a stranger gets 404 and no credentials 401", async () => {
    expect(
      (
        await api(t.as(t.reader)).get("/repos/:repo*/-/branch/:branch*/comments", {
          params: { repo: t.repo, branch: "feat" },
        })
      ).status,
    ).toBe(200);
    expectError(
      await api(t.as(t.stranger)).get("/repos/:repo*/-/branch/:branch*/comments", {
        params: { repo: t.repo, branch: "feat" },
      }),
      404,
      "REPO_NOT_FOUND",
    );
    expectError(
      await api(app.anonymous).get("/repos/:repo*/-/branch/:branch*/comments", {
        params: { repo: t.repo, branch: "feat" },
      }),
      401,
      "UNAUTHENTICATED",
    );
  });

  it("the author is always the caller: an author in the body is refused, naming it", async () => {
    const before = await state(t);
    const res = await t
      .as(t.writer)
      .post(`${t.base}/comment`, { branch: "feat", path: "a.md", body: "x", author: t.maintainer });
    expect(expectError(res, 400, "VALIDATION_FAILED")).toBe("body.author: unknown field");
    expect(await state(t)).toEqual(before);
    const mine = await api(t.as(t.writer)).post("/repos/:repo*/-/comment", {
      params: { repo: t.repo },
      body: { branch: "feat", path: "a.md", body: "x" },
    });
    expect(mine.body.author).toBe(t.writer);
  });
});

describe("who may delete a comment", () => {
  it("a writer cannot delete another writer's comment: 403, and it stays", async () => {
    const id = await add(t.writer2);
    const before = await state(t);
    expectError(
      await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", { params: { repo: t.repo, id } }),
      403,
      "FORBIDDEN",
    );
    expect(await state(t)).toEqual(before);
    expect(await ids()).toContain(id);
  });

  it("a writer cannot delete a maintainer's comment either", async () => {
    const id = await add(t.maintainer);
    expectError(
      await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", { params: { repo: t.repo, id } }),
      403,
      "FORBIDDEN",
    );
    expect(await ids()).toContain(id);
  });

  it("a reader cannot delete any comment (403), a stranger gets 404, no credentials 401", async () => {
    const id = await add(t.writer);
    const before = await state(t);
    expectError(
      await api(t.as(t.reader)).delete("/repos/:repo*/-/comment/:id", { params: { repo: t.repo, id } }),
      403,
      "FORBIDDEN",
    );
    expectError(
      await api(t.as(t.stranger)).delete("/repos/:repo*/-/comment/:id", { params: { repo: t.repo, id } }),
      404,
      "REPO_NOT_FOUND",
    );
    expectError(
      await api(app.anonymous).delete("/repos/:repo*/-/comment/:id", { params: { repo: t.repo, id } }),
      401,
      "UNAUTHENTICATED",
    );
    expect(await state(t)).toEqual(before);
  });

  it("an author demoted to reader can no longer delete their own comment", async () => {
    const who = `demoted-${Date.now()}@example.com`;
    await grant(t, who, "writer");
    const id = await add(who);
    await grant(t, who, "reader");
    expectError(
      await api(t.as(who)).delete("/repos/:repo*/-/comment/:id", { params: { repo: t.repo, id } }),
      403,
      "FORBIDDEN",
    );
    expect(await ids()).toContain(id);
  });

  it("the author matches whatever case the token's email uses", async () => {
    const id = await add(t.writer);
    expect((await t.as(t.writer.toUpperCase()).delete(`${t.base}/comment/${id}`)).status).toBe(204);
  });

  it("a maintainer deletes another's comment", async () => {
    const id = await add(t.writer);
    expect(
      (await api(t.as(t.maintainer)).delete("/repos/:repo*/-/comment/:id", { params: { repo: t.repo, id } }))
        .status,
    ).toBe(204);
    expect(await ids()).not.toContain(id);
  });
});
