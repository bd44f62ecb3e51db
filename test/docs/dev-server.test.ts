import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileResponse } from "../../shared/api/content.ts";
import { branchListResponse } from "../../shared/api/repos.ts";
import { freshDatabase } from "../support/app.ts";
import { docBlock, replaceAll, runShell, startShell } from "../support/doc-blocks.ts";
import { freePort } from "../support/ports.ts";

/**
 * The pages that start a development server (`DEV_IDENTITY=… npm start`) and then talk to it:
 * each test runs the page's server line, then its second terminal's lines, as written, with a free
 * port for 8080. The server is `npm start` on a fresh database of the test cluster (DATABASE_URL
 * set) instead of embedded PostgreSQL, which would take a minute to initialise.
 */

let scratch = "";
let host = "";
let stopServer: (() => Promise<void>) | undefined;

beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "quire-doc-dev-"));
  host = `127.0.0.1:${await freePort()}`;
});

afterEach(async () => {
  await stopServer?.();
  stopServer = undefined;
  await rm(scratch, { recursive: true, force: true });
});

/** Starts a page's server block on `host`. */
async function startDevServer(page: string, block: string): Promise<void> {
  const server = await startShell(docBlock(page, block), "quire is listening", {
    env: {
      PORT: host.split(":")[1] ?? "",
      DATABASE_URL: await freshDatabase(),
      SVC_BLOB_LOCAL_DIR: path.join(scratch, "blobs"),
    },
  });
  stopServer = server.stop;
}

/** GETs a path of the server as the development identity (no credentials). */
async function get(pathname: string): Promise<unknown> {
  const res = await fetch(`http://${host}${pathname}`);
  expect(res.status, pathname).toBe(200);
  return res.json();
}

describe("the pages' development-server commands, run as written", () => {
  it("README quickstart: curl makes an org, a repo and a commit, and lists the tree", async () => {
    await startDevServer("README.md", "readme/server");
    const { code, output } = await runShell(
      replaceAll(docBlock("README.md", "readme/try"), { "localhost:8080": host }),
    );
    expect(code, output).toBe(0);
    // Each curl printed the API's answer; the last is the tree with the committed file.
    expect(output).toContain('"name":"acme/docs"');
    expect(output).toMatch(/"path":"hello\.md"/);
    const file = fileResponse.parse(await get("/repos/acme/docs/-/file/hello.md?branch=main"));
    expect(Buffer.from(file.content, "base64").toString()).toBe("hello\n");
  }, 90_000);

  it("docs/cli.md: the CLI needs only QUIRE_SERVER, no sign-in and no token", async () => {
    await startDevServer("docs/cli.md", "cli-dev/server");
    const { code, output } = await runShell(
      replaceAll(docBlock("docs/cli.md", "cli-dev/commands"), { "127.0.0.1:8080": host }),
      // No stored sign-in anywhere (an empty config folder) and no token: the address is all.
      { env: { XDG_CONFIG_HOME: path.join(scratch, "config"), QUIRE_TOKEN: undefined }, ms: 90_000 },
    );
    expect(code, output).toBe(0);
    expect(output).toMatch(/^acme\/docs\tacme\t\S+\tyou@example\.com$/m);
    expect(output).toMatch(/^feature\/intro\t/m);
    const branches = branchListResponse.parse(await get("/repos/acme/docs/-/branches"));
    expect(branches.branches.map((b) => b.name).sort()).toEqual(["feature/intro", "main"]);
  }, 120_000);
});
