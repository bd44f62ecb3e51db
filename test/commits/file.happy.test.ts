import { beforeAll, describe, expect, it } from "vitest";
import type { FileResponse } from "../../shared/api/content.ts";
import { startTestApp } from "../support/app.ts";
import { b64, type Res } from "../support/client.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { commit, createBranch, repoWithOwner, sha256hex, urlPath } from "./fixtures.ts";

let s1: number;
let s2: number;
let s3: number;
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  s1 = await commit(fx, "main", { "doc.md": "v1", "other.md": "o" });
  s2 = await commit(fx, "main", { "doc.md": "v2" });
  await createBranch(fx, "feature/x");
  s3 = await commit(fx, "main", { "doc.md": "v3 on main" });
  await commit(fx, "feature/x", { "doc.md": "on the branch", "branch-only.md": "b" });
});

/** The raw path and query as written (what this file tests); a success is a `FileResponse`. */
const get = async (path: string, q = "") =>
  (await fx.client.get(`${fx.base}/file/${urlPath(path)}${q}`)) as Res<FileResponse>;
const text = (res: { body: { content: string } }) => Buffer.from(res.body.content, "base64").toString();

describe("a file", () => {
  it("returns path, base64 content, content_type and version_id at the head of main by default", async () => {
    const res = await get("doc.md");
    expectOk(res, 200);
    expect(res.body).toEqual({
      path: "doc.md",
      content: b64("v3 on main"),
      content_type: expect.stringMatching(/^text\/markdown/),
      version_id: sha256hex("v3 on main"),
    });
  });

  it("at=N returns the version as of commit N", async () => {
    expect(text(await get("doc.md", `?at=${s1}`))).toBe("v1");
    expect(text(await get("doc.md", `?at=${s2}`))).toBe("v2");
    expect(text(await get("doc.md", `?at=${s3}`))).toBe("v3 on main");
    expect((await get("doc.md", `?at=${s1}`)).body.version_id).toBe(sha256hex("v1"));
  });

  it("on a branch returns the branch's version, and main's version at the base for untouched files", async () => {
    expect(text(await get("doc.md", "?branch=feature/x"))).toBe("on the branch");
    expect(text(await get("other.md", `?branch=${encodeURIComponent("feature/x")}`))).toBe("o");
    expect(text(await get("doc.md", `?branch=feature/x&at=${s3}`))).toBe("v2");
  });

  it("on main does not show a branch's changes", async () => {
    expect(text(await get("doc.md", "?branch=main"))).toBe("v3 on main");
    expect((await get("branch-only.md")).status).toBe(404);
  });

  it("returns binary bytes unchanged and a nested unicode path", async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0, 0x89]);
    const path = "assets/bilder/größe ü.bin";
    const seq = await commit(fx, "main", [{ path, content: b64(bytes), content_type: "application/x-raw" }]);
    const res = await get(path, `?at=${seq}`);
    expect(res.body).toMatchObject({ path, content_type: "application/x-raw", version_id: sha256hex(bytes) });
    expect(Buffer.from(res.body.content, "base64").equals(bytes)).toBe(true);
  });

  it("whose last segment is 'history' is readable with the slash encoded as %2F", async () => {
    await commit(fx, "main", { "notes/history": "a file named history" });
    // `/file/notes/history` is the history endpoint of `notes`; the file itself needs %2F.
    const direct = (await fx.client.get(`${fx.base}/file/notes%2Fhistory`)) as Res<FileResponse>;
    expect(direct.body.path).toBe("notes/history");
    expect(text(direct)).toBe("a file named history");
  });
});
