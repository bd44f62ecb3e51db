import { describe, expect, it } from "vitest";
import { createBranch, repoWithOwner } from "../commits/fixtures.ts";
import { branchOf } from "../merge/fixtures.ts";
import { unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { commit, errorOf, expectOk, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

/**
 * The spec's origin clients (dlorenc/docstore's Go SDK and `ds` CLI) send `author` on commit and
 * rebase bodies: the SDK "", the CLI the local user name. Quire accepts that one field, ignores it
 * and records the caller; every other unknown field is still refused (docs/api.md).
 */
describe("the origin clients' author field", () => {
  it.each(["", "mallory"])(
    "on a commit (author %j) is accepted and the caller is the author",
    async (author) => {
      const fx = await repoWithOwner(app);
      const res = await unchecked(fx.client).post("/repos/:repo*/-/commit", {
        params: { repo: fx.repo },
        body: { branch: "main", message: "from ds", author, files: [{ path: "a.md", content: b64("x") }] },
      });
      expectOk(res, 201);
      expect(res.body).toMatchObject({ author: fx.owner });
      const rows = await app.sql("SELECT author FROM commits WHERE repo_id = $1", [fx.repoId]);
      expect(rows).toEqual([{ author: fx.owner }]);
    },
  );

  it.each(["", "mallory"])("on a rebase (author %j) is accepted and replays as before", async (author) => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "topic");
    await commit(fx, "topic", { "t.md": "t" });
    const mainHead = await commit(fx, "main", { "m.md": "m" });
    const res = await unchecked(fx.client).post("/repos/:repo*/-/rebase", {
      params: { repo: fx.repo },
      body: { branch: "topic", author },
    });
    expectOk(res, 200);
    expect((await branchOf(fx, "topic")).base_sequence).toBe(mainHead);
    const authors = await app.sql("SELECT DISTINCT author FROM commits WHERE repo_id = $1", [fx.repoId]);
    expect(authors).toEqual([{ author: fx.owner }]);
  });

  it("does not open the door to other unknown fields, nor to an author that is not a string", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "topic");
    const post = (path: "/repos/:repo*/-/commit" | "/repos/:repo*/-/rebase", body: object) =>
      unchecked(fx.client).post(path, { params: { repo: fx.repo }, body });
    const files = [{ path: "a.md", content: b64("x") }];
    const refused = [
      [
        await post("/repos/:repo*/-/commit", {
          branch: "main",
          message: "m",
          author: "",
          files,
          committer: "x",
        }),
        "body.committer: unknown field",
      ],
      [
        await post("/repos/:repo*/-/commit", { branch: "main", message: "m", author: 7, files }),
        "body.author:",
      ],
      [
        await post("/repos/:repo*/-/rebase", { branch: "topic", author: "", reviewer: "x" }),
        "body.reviewer: unknown field",
      ],
    ] as const;
    for (const [res, message] of refused) {
      expect(res.status).toBe(400);
      expect(errorOf(res).error).toContain(message);
    }
    expect(await app.sql("SELECT 1 FROM commits WHERE repo_id = $1", [fx.repoId])).toEqual([]);
  });
});
