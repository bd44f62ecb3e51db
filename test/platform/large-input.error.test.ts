import { describe, expect, it } from "vitest";
import { expectError, repoWithOwner, snapshot } from "../commits/fixtures.ts";
import { startTestApp } from "../support/app.ts";
import { b64, type Res } from "../support/client.ts";
import { errorOf, useFixture } from "../support/world.ts";

// Strings of several MB in fields whose patterns used to recurse or backtrack per character or
// per group (a stack overflow, so a 500): each is refused with a 400 that does not echo the
// input, and nothing is written.

const MB = 1024 * 1024;
/** "a/a/a/…": a valid branch shape, many segments long. */
const manySegments = "a/".repeat(3 * MB) + "a";

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));

/** The refusal is short: the message names the field, not the megabytes sent. */
function expectShort400(res: Res, code: string, field: string): void {
  const msg = expectError(res, 400, code);
  expect(msg).toContain(field);
  expect(JSON.stringify(res.body).length).toBeLessThan(2000);
}

describe("huge values in validated fields", () => {
  it("a commit's branch of 6 MB: 400, nothing written", async () => {
    const before = await snapshot(app, fx);
    const res = await fx.client.post(`${fx.base}/commit`, {
      branch: manySegments,
      message: "m",
      files: [{ path: "a.md", content: b64("a") }],
    });
    expectShort400(res, "VALIDATION_FAILED", "body.branch");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("a content_type of 6 MB: 400, nothing written", async () => {
    const before = await snapshot(app, fx);
    const res = await fx.client.post(`${fx.base}/commit`, {
      branch: "main",
      message: "m",
      files: [{ path: "a.md", content: b64("a"), content_type: `text/plain${"; a=b".repeat(MB)}` }],
    });
    expectShort400(res, "VALIDATION_FAILED", "content_type");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("a new branch's name of 6 MB: 400", async () => {
    const res = await fx.client.post(`${fx.base}/branch`, { name: manySegments });
    expectShort400(res, "VALIDATION_FAILED", "body.name");
  });

  it("an invitation's email of 12 MB: 400", async () => {
    const res = await fx.client.post(`/orgs/${fx.org}/invites`, {
      email: `${"a.".repeat(6 * MB)}@example.com`,
      role: "member",
    });
    expectShort400(res, "VALIDATION_FAILED", "body.email");
  });

  it("a purge's older_than of 6 MB: 400", async () => {
    const res = await fx.client.post(`${fx.base}/purge`, { older_than: "1d".repeat(3 * MB) });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(["INVALID_DURATION", "VALIDATION_FAILED"]).toContain(errorOf(res).code);
    expect(errorOf(res).error).toContain("body.older_than");
    expect(JSON.stringify(res.body).length).toBeLessThan(2000);
  });
});
