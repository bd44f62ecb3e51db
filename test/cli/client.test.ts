import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClient,
  fillPath,
  parseEventStream,
  QuireApiError,
  type QuireClient,
} from "../../cli/client/index.ts";
import { startTestApp, type TestApp } from "../support/app.ts";

/**
 * The library client (cli/client/) on its own: names with slashes and paths with any character
 * reach the routes they mean, lists that paginate are read whole, errors are typed with the
 * server's code, and event streams parse as the server frames them.
 */

const OWNER = "cli-lib@example.com";
const REPO = "clilib/deep/docs";
let app: TestApp;
let quire: QuireClient;

/** Paths a user may commit (docs/names.md) that need encoding: spaces, %, #, ?, unicode, `+`. */
const ODD = ["a b.md", "100%.md", "x#y.md", "q?.md", "ü/ñ.md", "plus+sign.md", "dir with space/-dash.md"];

beforeAll(async () => {
  app = await startTestApp();
  quire = createClient({ server: app.url, token: () => app.idp.token(OWNER) });
  await quire.post("/orgs", { body: { name: "clilib" } });
  await quire.post("/repos", { body: { owner: "clilib", name: REPO } });
  const files = [...ODD, ...Array.from({ length: 25 }, (_, i) => `many/${String(i).padStart(2, "0")}.md`)];
  await quire.post("/repos/:repo*/-/commit", {
    params: { repo: REPO },
    body: {
      branch: "main",
      message: "odd names",
      files: files.map((path) => ({ path, content: Buffer.from(path).toString("base64") })),
    },
  });
  await quire.post("/repos/:repo*/-/branch", { params: { repo: REPO }, body: { name: "feature/x/y" } });
});
afterAll(() => app?.close());

describe("the library client", () => {
  it("reaches files with any character in their path, on a repo and branch with slashes", async () => {
    for (const path of ODD) {
      const file = await quire.get("/repos/:repo*/-/file/:path*", {
        params: { repo: REPO, path },
        query: { branch: "feature/x/y" },
      });
      expect(file.path).toBe(path);
      expect(Buffer.from(file.content, "base64").toString()).toBe(path);
    }
    expect(fillPath("/repos/:repo*/-/file/:path*", { repo: "a/b", path: "x y/100%#?.md" })).toBe(
      "/repos/a/b/-/file/x%20y/100%25%23%3F.md",
    );
    expect(() => fillPath("/repos/:repo*", { repo: "a//b" })).toThrow(/empty or '-' segment/);
    expect(() => fillPath("/repos/:repo*", { repo: "a/-/b" })).toThrow(/empty or '-' segment/);
  });

  it("iterates every page of the tree and of a file's history", async () => {
    const paths: string[] = [];
    for await (const entry of quire.tree(REPO, { pageSize: 4 })) paths.push(entry.path);
    expect(paths).toHaveLength(ODD.length + 25);
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths).toEqual([...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    for (let i = 0; i < 3; i++)
      await quire.post("/repos/:repo*/-/commit", {
        params: { repo: REPO },
        body: {
          branch: "main",
          message: `edit ${i}`,
          files: [{ path: "a b.md", content: Buffer.from(`v${i}`).toString("base64") }],
        },
      });
    const history = [];
    for await (const h of quire.fileHistory(REPO, "a b.md", { pageSize: 2 })) history.push(h.sequence);
    expect(history).toHaveLength(4);
    expect(history).toEqual([...history].sort((a, b) => b - a));
  });

  it("throws QuireApiError with the status and the server's code", async () => {
    const err = await quire
      .get("/repos/:repo*", { params: { repo: "clilib/none" } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuireApiError);
    expect(err).toMatchObject({
      status: 404,
      code: "REPO_NOT_FOUND",
      method: "GET",
      path: "/repos/clilib/none",
    });
    const raw = await quire.raw.get("/repos/:repo*", { params: { repo: "clilib/none" } });
    expect(raw.ok).toBe(false);
    if (!raw.ok) expect(raw.body.code).toBe("REPO_NOT_FOUND");
  });

  it("parses event streams as the server frames them: comments, ids, events, split chunks", async () => {
    const text =
      ': ok\n\nid: 1.1\ndata: {"type":"a"}\n\nevent: gap\ndata: {"reason":"x"}\r\n\r\n: keepalive\n\nid: 1.2\ndata: {"type":"b"}\n\n';
    const bytes = Buffer.from(text);
    // Chunks that split lines, fields and CRLF pairs.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 7) c.enqueue(bytes.subarray(i, i + 7));
        c.close();
      },
    });
    const out = [];
    for await (const m of parseEventStream(stream)) out.push(m);
    expect(out).toEqual([
      { id: "1.1", event: "message", data: { type: "a" } },
      { id: undefined, event: "gap", data: { reason: "x" } },
      { id: "1.2", event: "message", data: { type: "b" } },
    ]);
  });

  it("a stream the server refuses is an error, not a retry loop", async () => {
    const anonymous = createClient({ server: app.url });
    const err = await (async () => {
      for await (const _ of anonymous.events({ repo: REPO })) break;
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "StreamRefused", status: 401 });
  });
});
