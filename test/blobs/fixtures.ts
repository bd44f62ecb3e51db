import { createHash, randomBytes } from "node:crypto";
import { expect } from "vitest";
import { api } from "../support/api.ts";
import type { TestApp } from "../support/app.ts";
import { b64, type Client } from "../support/client.ts";
import { expectOk } from "../support/world.ts";

/** A repo in a fresh org, with a client signed in as the org's owner (so admin on the repo). */
export interface Repo {
  client: Client;
  /** Full repo name, `<org>/docs`. */
  repo: string;
  /** `/repos/<org>/docs/-`: prefix of every repo-scoped path. */
  base: string;
  id: number;
}

export async function newRepo(app: TestApp): Promise<Repo> {
  const org = `o${randomBytes(5).toString("hex")}`;
  const client = app.as(`${org}-owner@example.com`);
  expect((await api(client).post("/orgs", { body: { name: org } })).status).toBe(201);
  const name = `${org}/docs`;
  expect((await api(client).post("/repos", { body: { owner: org, name } })).status).toBe(201);
  const [row] = await app.sql<{ id: number }>("SELECT id FROM repos WHERE name = $1", [name]);
  return { client, repo: name, base: `/repos/${name}/-`, id: Number(row!.id) };
}

/** Commits `files` (path to bytes) to main; fails the test unless the commit is created. */
export async function commitFiles(repo: Repo, files: Record<string, Buffer>): Promise<void> {
  const list = Object.entries(files).map(([path, data]) => ({ path, content: b64(data) }));
  const res = await api(repo.client).post("/repos/:repo*/-/commit", {
    params: { repo: repo.repo },
    body: { branch: "main", message: "m", files: list },
  });
  expectOk(res, 201);
}

/** A file's bytes and version_id as GET /repos/{name}/-/file/{path} returns them. */
export async function readFileBack(repo: Repo, path: string): Promise<{ data: Buffer; versionId: string }> {
  const res = await api(repo.client).get("/repos/:repo*/-/file/:path*", {
    params: { repo: repo.repo, path },
  });
  expectOk(res, 200);
  return { data: Buffer.from(res.body.content, "base64"), versionId: res.body.version_id };
}

/** A row of the `contents` table: where one distinct body of the repo is kept. */
export interface ContentRow {
  sha: string;
  blob_key: string | null;
  inline: boolean;
}

export const contentRows = (app: TestApp, repo: Repo) =>
  app.sql<ContentRow>(
    `SELECT encode(sha256, 'hex') AS sha, blob_key, data IS NOT NULL AS inline
     FROM contents WHERE repo_id = $1 ORDER BY sha`,
    [repo.id],
  );

export const sha256hex = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/** Bytes that a text round trip would corrupt (NUL, 0xff, invalid UTF-8), then random ones. */
export const binary = (size: number) =>
  Buffer.concat([Buffer.from([0, 0xff, 0xc3, 0x28]), randomBytes(size - 4)]);
