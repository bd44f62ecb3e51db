import { beforeAll, describe, expect, it } from "vitest";
import {
  branch,
  commitAs,
  markMerged,
  state,
  type Team,
  TIMESTAMP,
  team,
  UUID,
} from "../reviews/fixtures.ts";
import { api, type Options, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, expectStatus, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

const comment = (t: Team, who: string, body: Options<"POST", "/repos/:repo*/-/comment">["body"]) =>
  api(t.as(who)).post("/repos/:repo*/-/comment", { params: { repo: t.repo }, body });

describe("adding a comment", () => {
  it("answers 201 with the comment, attached to the branch head, authored by the caller", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const head = await commitAs(t, t.writer, "feat", "docs/guide.md");
    const res = await comment(t, t.writer2, {
      branch: "feat",
      path: "docs/guide.md",
      body: "typo on line 3",
    });
    expectOk(res, 201);
    expect(Object.keys(res.body).sort()).toEqual([
      "author",
      "body",
      "branch",
      "created_at",
      "id",
      "path",
      "reply_to",
      "sequence",
    ]);
    expect(res.body).toMatchObject({
      branch: "feat",
      path: "docs/guide.md",
      body: "typo on line 3",
      author: t.writer2,
      sequence: head,
    });
    expect(res.body.id).toMatch(UUID);
    expect(res.body.created_at).toMatch(TIMESTAMP);
  });

  it("records no event (the spec has no event type for comments)", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    const before = (await state(t))["events"];
    expect((await comment(t, t.writer, { branch: "feat", path: "a.md", body: "x" })).status).toBe(201);
    expect((await state(t))["events"]).toBe(before);
  });

  it("accepts a path that does not exist on the branch, and comments on main", async () => {
    const t = await team(app);
    await branch(t, "feat");
    expect(
      (await comment(t, t.writer, { branch: "feat", path: "not/there.md", body: "add this?" })).status,
    ).toBe(201);
    const onMain = await comment(t, t.writer, { branch: "main", path: "README.md", body: "hm" });
    expectOk(onMain, 201);
    expect(onMain.body).toMatchObject({ branch: "main", sequence: 0 });
  });

  it("follows the head: a comment after a commit is attached to the new head", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const s1 = await commitAs(t, t.writer, "feat");
    const a = okBody(await comment(t, t.writer2, { branch: "feat", path: "a.md", body: "one" }));
    const s2 = await commitAs(t, t.writer, "feat", "a.md", "y");
    const b = okBody(await comment(t, t.writer2, { branch: "feat", path: "a.md", body: "two" }));
    expect([a.sequence, b.sequence]).toEqual([s1, s2]);
  });

  it("accepts a body of 65,536 characters and any text in it", async () => {
    const t = await team(app);
    await branch(t, "feat");
    for (const body of ["z".repeat(65_536), "line 1\nline 2\t✓ ünïcode"]) {
      const res = await comment(t, t.writer, { branch: "feat", path: "a.md", body });
      expectOk(res, 201);
      expect(res.body.body).toBe(body);
    }
  });
});

describe("replying to a comment", () => {
  it("answers 201 with reply_to set, listed after its parent; a comment of its own has null", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const parent = okBody(await comment(t, t.writer, { branch: "feat", path: "a.md", body: "why?" }));
    expect(parent.reply_to).toBeNull();
    const reply = await comment(t, t.writer2, {
      branch: "feat",
      path: "a.md",
      body: "because",
      reply_to: parent.id.toUpperCase(),
    });
    expectOk(reply, 201);
    expect(reply.body).toMatchObject({ reply_to: parent.id, author: t.writer2, path: "a.md" });
    const listed = okBody(
      await api(t.client).get("/repos/:repo*/-/branch/:branch*/comments", {
        params: { repo: t.repo, branch: "feat" },
      }),
    ).comments;
    expect(listed.map((c) => [c.body, c.reply_to])).toEqual([
      ["why?", null],
      ["because", parent.id],
    ]);
  });

  it("keeps a reply when its parent is deleted, as a comment of its own", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const parent = okBody(await comment(t, t.writer, { branch: "feat", path: "a.md", body: "p" }));
    okBody(await comment(t, t.writer2, { branch: "feat", path: "a.md", body: "r", reply_to: parent.id }));
    expectOk(
      await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", {
        params: { repo: t.repo, id: parent.id },
      }),
      204,
    );
    const listed = okBody(
      await api(t.client).get("/repos/:repo*/-/branch/:branch*/comments", {
        params: { repo: t.repo, branch: "feat" },
      }),
    ).comments;
    expect(listed.map((c) => [c.body, c.reply_to])).toEqual([["r", null]]);
  });
});

describe("listing comments", () => {
  let t: Team;
  beforeAll(async () => {
    t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    for (const [path, body, who] of [
      ["b.md", "first", t.writer],
      ["a.md", "second", t.writer2],
      ["b.md", "third", t.maintainer],
      ["dir/c.md", "fourth", t.writer],
    ] as const)
      expect((await comment(t, who, { branch: "feat", path, body })).status).toBe(201);
  });

  it("returns {comments: [...]} oldest first", async () => {
    const res = await api(t.as(t.reader)).get("/repos/:repo*/-/branch/:branch*/comments", {
      params: { repo: t.repo, branch: "feat" },
    });
    expectOk(res, 200);
    expect(Object.keys(res.body)).toEqual(["comments"]);
    expect(res.body.comments.map((c) => [c.body, c.path, c.author])).toEqual([
      ["first", "b.md", t.writer],
      ["second", "a.md", t.writer2],
      ["third", "b.md", t.maintainer],
      ["fourth", "dir/c.md", t.writer],
    ]);
  });

  it("with path, returns only the comments on that file", async () => {
    const bodies = async (path: string) =>
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/comments", {
          params: { repo: t.repo, branch: "feat" },
          query: { path },
        }),
      ).comments.map((c) => c.body);
    expect(await bodies("b.md")).toEqual(["first", "third"]);
    expect(await bodies("dir/c.md")).toEqual(["fourth"]);
    expect(await bodies("dir")).toEqual([]);
    expect(await bodies("nothing.md")).toEqual([]);
  });

  it("returns an empty list for a branch without comments", async () => {
    expect(
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/comments", {
          params: { repo: t.repo, branch: "main" },
        }),
      ),
    ).toEqual({ comments: [] });
  });

  it("still lists the comments of a merged branch", async () => {
    const u = await team(app);
    await branch(u, "done");
    expect((await comment(u, u.writer, { branch: "done", path: "a.md", body: "x" })).status).toBe(201);
    await markMerged(u, "done");
    expect(
      okBody(
        await api(u.client).get("/repos/:repo*/-/branch/:branch*/comments", {
          params: { repo: u.repo, branch: "done" },
        }),
      ).comments,
    ).toHaveLength(1);
  });

  it("works for branch names with slashes", async () => {
    const u = await team(app);
    await branch(u, "feature/x");
    expect((await comment(u, u.writer, { branch: "feature/x", path: "a.md", body: "x" })).status).toBe(201);
    for (const seg of ["feature/x", "feature%2Fx"])
      expect(
        (
          expectStatus(await u.client.get(`${u.base}/branch/${seg}/comments`), 200) as {
            comments: { branch: string }[];
          }
        ).comments[0]?.branch,
      ).toBe("feature/x");
  });
});

describe("deleting a comment", () => {
  it("lets a writer delete their own: 204, gone from the list, no event", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const c = okBody(await comment(t, t.writer, { branch: "feat", path: "a.md", body: "oops" }));
    const keep = okBody(await comment(t, t.writer2, { branch: "feat", path: "a.md", body: "keep" }));
    const events = (await state(t))["events"];
    const res = await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", {
      params: { repo: t.repo, id: c.id },
    });
    expectOk(res, 204);
    expect(res.body).toBe("");
    expect(
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/comments", {
          params: { repo: t.repo, branch: "feat" },
        }),
      ).comments.map((x) => x.id),
    ).toEqual([keep.id]);
    expect((await state(t))["events"]).toBe(events);
  });

  it("lets a maintainer, an admin and a global admin delete anyone's", async () => {
    const t = await team(app);
    await branch(t, "feat");
    for (const who of [t.maintainer, t.owner, "admin@quire.test"]) {
      const c = okBody(await comment(t, t.writer, { branch: "feat", path: "a.md", body: "x" }));
      expect(
        (
          await api(t.as(who)).delete("/repos/:repo*/-/comment/:id", {
            params: { repo: t.repo, id: c.id },
          })
        ).status,
      ).toBe(204);
    }
    expect(
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/comments", {
          params: { repo: t.repo, branch: "feat" },
        }),
      ),
    ).toEqual({ comments: [] });
  });

  it("works on comments of merged and abandoned branches", async () => {
    const t = await team(app);
    await branch(t, "done");
    await branch(t, "gone");
    const a = okBody(await comment(t, t.writer, { branch: "done", path: "a.md", body: "x" }));
    const b = okBody(await comment(t, t.writer, { branch: "gone", path: "a.md", body: "x" }));
    await markMerged(t, "done");
    expect(
      (
        await api(t.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: t.repo, branch: "gone" },
        })
      ).status,
    ).toBe(204);
    expect(
      (
        await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", {
          params: { repo: t.repo, id: a.id },
        })
      ).status,
    ).toBe(204);
    expect(
      (
        await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", {
          params: { repo: t.repo, id: b.id },
        })
      ).status,
    ).toBe(204);
  });
});
