import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { commit, repoWithOwner } from "./fixtures.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** `POST commit` answers the spec's Commit record, `files` included, as `GET commit/{sequence}` does. */
describe("the answer of a commit", () => {
  it("is the commit record with files (path, version_id) in path byte order, equal to GET commit", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "old.md": "old" });
    const res = await fx.client.post(`${fx.base}/commit`, {
      branch: "main",
      message: "several",
      files: [
        { path: "z.md", content: b64("z") },
        { path: "old.md", content: null },
        { path: "\u00e9.md", content: b64("e") },
        { path: "B.md", content: b64("b"), content_type: "text/markdown" },
        { path: "\u{1F600}.md", content: b64("smile") },
        { path: "\uFF21.md", content: b64("fullwidth A") },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const got = await fx.client.get(`${fx.base}/commit/${res.body.sequence}`);
    expect(res.body).toEqual(got.body);
    expect(res.body).toMatchObject({ sequence: 2, branch: "main", message: "several", author: fx.owner });
    expect(res.body.files.map((f: { path: string }) => f.path)).toEqual([
      "B.md",
      "old.md",
      "z.md",
      "\u00e9.md",
      "\uFF21.md",
      "\u{1F600}.md",
    ]);
    expect(res.body.files[1]).toEqual({ path: "old.md", version_id: null });
    const file = await fx.client.get(`${fx.base}/file/z.md`);
    expect(res.body.files[2].version_id).toBe(file.body.version_id);
  });
});
