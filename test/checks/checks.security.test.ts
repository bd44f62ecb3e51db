import { beforeAll, describe, expect, it } from "vitest";
import { branch, commitAs, eventData, state, team } from "../reviews/fixtures.ts";
import { api, okBody, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, expectStatus, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);
const t = useFixture(() => team(app));
beforeAll(async () => {
  await branch(t, "feat");
  await commitAs(t, t.writer, "feat");
});

const body = { branch: "feat", check_name: "ci/test", status: "passed" };

describe("who may report a check run", () => {
  it("needs writer: a reader gets 403, a stranger 404, no credentials 401; nothing changes", async () => {
    const before = await state(t);
    expectError(
      await unchecked(t.as(t.reader)).post("/repos/:repo*/-/check", { params: { repo: t.repo }, body }),
      403,
      "FORBIDDEN",
    );
    expectError(
      await unchecked(t.as(t.stranger)).post("/repos/:repo*/-/check", { params: { repo: t.repo }, body }),
      404,
      "REPO_NOT_FOUND",
    );
    expectError(
      await unchecked(app.anonymous).post("/repos/:repo*/-/check", { params: { repo: t.repo }, body }),
      401,
      "UNAUTHENTICATED",
    );
    const forged = await app.anonymous.raw("POST", `${t.base}/check`, {
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", authorization: "Bearer not-a-token" },
    });
    expectError(forged, 401, "UNAUTHENTICATED");
    expect(await state(t)).toEqual(before);
    expect(await eventData(t, "com.svc.check.reported")).toEqual([]);
  });

  it("lets a reader list check runs; a stranger gets 404 and no credentials 401", async () => {
    expect(
      (
        await api(t.as(t.reader)).get("/repos/:repo*/-/branch/:branch*/checks", {
          params: { repo: t.repo, branch: "feat" },
        })
      ).status,
    ).toBe(200);
    expectError(
      await api(t.as(t.stranger)).get("/repos/:repo*/-/branch/:branch*/checks", {
        params: { repo: t.repo, branch: "feat" },
      }),
      404,
      "REPO_NOT_FOUND",
    );
    expectError(
      await api(app.anonymous).get("/repos/:repo*/-/branch/:branch*/checks", {
        params: { repo: t.repo, branch: "feat" },
      }),
      401,
      "UNAUTHENTICATED",
    );
  });

  it("the reporter is always the caller: a reporter or id in the body is refused, naming them", async () => {
    const before = await state(t);
    const forged = await unchecked(t.as(t.writer)).post("/repos/:repo*/-/check", {
      params: { repo: t.repo },
      body: {
        ...body,
        check_name: "forged",
        reporter: "ci-job:1234",
        id: "00000000-0000-0000-0000-000000000000",
      },
    });
    expect(expectError(forged, 400, "VALIDATION_FAILED")).toBe(
      "body.reporter: unknown field; body.id: unknown field",
    );
    expect(await state(t)).toEqual(before);
    const res = await unchecked(t.as(t.writer)).post("/repos/:repo*/-/check", {
      params: { repo: t.repo },
      body: { ...body, check_name: "forged" },
    });
    expect(expectStatus(res, 201)).toMatchObject({ reporter: t.writer });
    const events = await eventData(t, "com.svc.check.reported");
    expect(events.at(-1)).toMatchObject({ check_name: "forged", reporter: t.writer });
  });

  it("a check run on one repo's branch is not visible on another repo's branch of the same name", async () => {
    const u = await team(app);
    await branch(u, "feat");
    expect(
      (
        await unchecked(t.as(t.writer)).post("/repos/:repo*/-/check", {
          params: { repo: t.repo },
          body: { ...body, check_name: "mine" },
        })
      ).status,
    ).toBe(201);
    expect(
      okBody(
        await api(u.client).get("/repos/:repo*/-/branch/:branch*/checks", {
          params: { repo: u.repo, branch: "feat" },
        }),
      ),
    ).toEqual({ check_runs: [] });
    // t's writer has no role on u.
    expectError(
      await unchecked(t.as(t.writer)).post("/repos/:repo*/-/check", { params: { repo: u.repo }, body }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});
