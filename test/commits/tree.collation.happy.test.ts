import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer } from "../../functions/server.ts";
import { ADMIN, type TestApp, testAppOver } from "../support/app.ts";
import { databaseUrl } from "../support/global-setup.ts";
import { startTestIdp } from "../support/idp.ts";
import { expectOk } from "../support/world.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner } from "./fixtures.ts";

// Production databases rarely use the "C" collation (Cloud SQL defaults to en_US.UTF8). Paths are
// ordered by bytes whatever the database's default collation: this file runs Quire against a
// database whose default collation is ICU en-US, where 'a.md' sorts before 'B.md'.

let app: TestApp;
let dbName: string;
beforeAll(async () => {
  const adminUrl = inject("adminUrl");
  dbName = `t_icu_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(
    `CREATE DATABASE ${dbName} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`,
  );
  await admin.end();
  const url = databaseUrl(adminUrl, dbName);
  const idp = await startTestIdp();
  const blobDir = await mkdtemp(path.join(tmpdir(), "quire-blobs-"));
  const server = await startServer({
    DATABASE_URL: url,
    PORT: "0",
    OIDC_ISSUER: idp.issuer,
    GLOBAL_ADMINS: ADMIN,
    LOG_LEVEL: "error",
    SVC_BLOB_LOCAL_DIR: blobDir,
  });
  app = testAppOver(server, idp, url, blobDir, async () => {
    const drop = new pg.Client({ connectionString: adminUrl });
    await drop.connect();
    await drop.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await drop.end();
  });
});
afterAll(() => app.close());

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function pagePaths(fx: RepoFixture, q: string, limit: number): Promise<string[]> {
  const all: string[] = [];
  let after = "";
  for (let i = 0; i < 20; i++) {
    const res = await fx.client.get(`${fx.base}/tree?${q}&limit=${limit}${after}`);
    expectOk(res, 200);
    const page = (res.body as { entries: { path: string }[] }).entries.map((e) => e.path);
    if (page.length === 0) break;
    all.push(...page);
    after = `&after=${encodeURIComponent(page.at(-1)!)}`;
  }
  return all;
}

describe("a branch's tree on a database whose default collation is not C", () => {
  let fx: RepoFixture;
  const mainPaths = ["a.md", "c.md", "é.md"];
  const branchPaths = ["B.md", "D.md", "Z/z.md"];
  beforeAll(async () => {
    fx = await repoWithOwner(app);
    await commit(fx, "main", Object.fromEntries(mainPaths.map((p) => [p, p])));
    await createBranch(fx, "topic");
    await commit(fx, "topic", Object.fromEntries(branchPaths.map((p) => [p, p])));
  });

  it("lists main's tree in byte order", async () => {
    expect(await pagePaths(fx, "branch=main", 100)).toEqual([...mainPaths].sort(byBytes));
  });

  it("lists the branch's tree (its changes over main) in byte order", async () => {
    const expected = [...mainPaths, ...branchPaths].sort(byBytes);
    expect(await pagePaths(fx, "branch=topic", 100)).toEqual(expected);
  });

  it("pages through the branch's tree with after, every path exactly once", async () => {
    const expected = [...mainPaths, ...branchPaths].sort(byBytes);
    expect(await pagePaths(fx, "branch=topic", 1)).toEqual(expected);
    expect(await pagePaths(fx, "branch=topic", 2)).toEqual(expected);
  });
});
