import { describe, expect, it } from "vitest";
import { api, okBody, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, expectOk, useFixture } from "../support/world.ts";
import { branch, commitAs, eventData, grant, state, type Team, team } from "./fixtures.ts";

const app = useFixture(startTestApp);

const approve = (t: Team, who: string, name = "feat") =>
  api(t.as(who)).post("/repos/:repo*/-/review", {
    params: { repo: t.repo },
    body: { branch: name, status: "approved", body: "" },
  });

describe("self-approval", () => {
  it("refuses an author of the branch's head commit with 403 SELF_APPROVAL, changes nothing", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    const before = await state(t);
    expectError(await approve(t, t.writer), 403, "SELF_APPROVAL");
    expect(await state(t)).toEqual(before);
    expect(await eventData(t, "com.svc.review.submitted")).toEqual([]);
  });

  it("refuses anyone who authored any commit on the branch, not only the last", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat", "a.md");
    await commitAs(t, t.writer2, "feat", "b.md");
    await commitAs(t, t.maintainer, "feat", "c.md");
    for (const who of [t.writer, t.writer2, t.maintainer])
      expectError(await approve(t, who), 403, "SELF_APPROVAL");
    expect((await approve(t, t.owner)).status).toBe(201);
  });

  it("refuses an admin or global admin who committed on the branch too", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.owner, "feat");
    expectError(await approve(t, t.owner), 403, "SELF_APPROVAL");
    await commitAs(t, "admin@quire.test", "feat", "b.md");
    expectError(await approve(t, "admin@quire.test"), 403, "SELF_APPROVAL");
  });

  it("matches the author whatever case the token's email uses", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    expectError(await approve(t, t.writer.toUpperCase()), 403, "SELF_APPROVAL");
  });
});

describe("who may review", () => {
  it("needs writer: a reader gets 403, a stranger 404, no credentials 401; nothing changes", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    const before = await state(t);
    expectError(await approve(t, t.reader), 403, "FORBIDDEN");
    expectError(await approve(t, t.stranger), 404, "REPO_NOT_FOUND");
    expectError(
      await api(app.anonymous).post("/repos/:repo*/-/review", {
        params: { repo: t.repo },
        body: { branch: "feat", status: "approved", body: "" },
      }),
      401,
      "UNAUTHENTICATED",
    );
    expect(await state(t)).toEqual(before);
  });

  it("lets a reader list reviews; a stranger gets 404 and no credentials 401", async () => {
    const t = await team(app);
    await branch(t, "feat");
    expect(
      (
        await api(t.as(t.reader)).get("/repos/:repo*/-/branch/:branch*/reviews", {
          params: { repo: t.repo, branch: "feat" },
        })
      ).status,
    ).toBe(200);
    expectError(
      await api(t.as(t.stranger)).get("/repos/:repo*/-/branch/:branch*/reviews", {
        params: { repo: t.repo, branch: "feat" },
      }),
      404,
      "REPO_NOT_FOUND",
    );
    expectError(
      await api(app.anonymous).get("/repos/:repo*/-/branch/:branch*/reviews", {
        params: { repo: t.repo, branch: "feat" },
      }),
      401,
      "UNAUTHENTICATED",
    );
  });

  it("the reviewer is always the caller: a reviewer or sequence in the body is refused, naming them", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const head = await commitAs(t, t.writer, "feat");
    const before = await state(t);
    const forged = await unchecked(t.as(t.writer2)).post("/repos/:repo*/-/review", {
      params: { repo: t.repo },
      body: {
        branch: "feat",
        status: "approved",
        body: "",
        reviewer: t.maintainer,
        sequence: 1,
      },
    });
    expect(expectError(forged, 400, "VALIDATION_FAILED")).toBe(
      "body.reviewer: unknown field; body.sequence: unknown field",
    );
    expect(await state(t)).toEqual(before);
    const res = await t
      .as(t.writer2)
      .post(`${t.base}/review`, { branch: "feat", status: "approved", body: "" });
    expectOk(res, 201);
    expect(res.body).toMatchObject({ reviewer: t.writer2, sequence: head });
  });

  it("an author cannot approve by another route: revoking and regranting changes nothing", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    await grant(t, t.writer, "maintainer");
    expectError(await approve(t, t.writer), 403, "SELF_APPROVAL");
  });

  it("a review of another repo's branch of the same name does not leak across repos", async () => {
    const t = await team(app);
    const u = await team(app);
    await branch(t, "feat");
    await branch(u, "feat");
    await commitAs(t, t.writer, "feat");
    // t.writer authored nothing in u; but has no role there either.
    expectError(await approve(u, t.writer), 404, "REPO_NOT_FOUND");
    expect((await approve(t, t.writer2)).status).toBe(201);
    expect(
      okBody(
        await api(u.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
          params: { repo: u.repo, branch: "feat" },
        }),
      ),
    ).toEqual([]);
  });
});
