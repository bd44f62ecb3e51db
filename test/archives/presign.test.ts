import { createHmac, randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../functions/server.ts";
import {
  ARCHIVE_KEY_NAME,
  archiveSigningKey,
  presignArchiveUrl,
  verifyArchiveSignature,
} from "../../shared/archives/presign.ts";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import type { Res } from "../support/client.ts";
import { commit, createBranch, expectError, type RepoFixture, repoWithOwner } from "../support/world.ts";
import { archiveOf, download, downloadAs, sha256hex } from "./fixtures.ts";

const KEY = randomBytes(32);
const now = () => Math.floor(Date.now() / 1000);

/** The signature as the spec defines it, computed here independently of Quire's code. */
const hmac = (key: Buffer, repo: string, branch: string, sequence: number, expires: number) =>
  createHmac("sha256", key).update(`${repo}\n${branch}\n${sequence}\n${expires}`).digest("hex");

/** The same length of hex with its first digit changed. */
const flip = (hex: string) => (hex[0] === "0" ? "1" : "0") + hex.slice(1);

const query = (q: Record<string, string | number>) =>
  `?${new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)]))}`;

/** A download as the test client's Res shape, so that expectError can read the JSON body. */
async function anonymousGet(app: TestApp, path: string, headers: Record<string, string> = {}): Promise<Res> {
  const res = await download(app, path, headers);
  const text = res.bytes.toString("utf8");
  const json = (res.headers.get("content-type") ?? "").includes("json");
  return { status: res.status, headers: res.headers, body: json ? JSON.parse(text) : text };
}

describe("presigned archive URLs with SVC_ARCHIVE_SIGNING_KEY", () => {
  let app: TestApp;
  let fx: RepoFixture;
  let other: RepoFixture;
  let v1: number;
  let head: number;
  beforeAll(async () => {
    app = await startTestApp({ SVC_ARCHIVE_SIGNING_KEY: KEY.toString("hex") });
    fx = await repoWithOwner(app);
    other = await repoWithOwner(app);
    v1 = await commit(fx, "main", { "a.txt": "one\n" });
    await createBranch(fx, "feature");
    await commit(fx, "feature", { "b.txt": "branch\n" });
    head = await commit(fx, "main", { "a.txt": "two\n" });
    await commit(other, "main", { "other.txt": "other\n" });
  });
  afterAll(async () => {
    await app?.close();
  });

  const signed = (o: { repo?: string; branch?: string; at?: number; expires?: number } = {}) => {
    const repo = o.repo ?? fx.repo;
    const branch = o.branch ?? "main";
    const at = o.at ?? head;
    const expires = o.expires ?? now() + 600;
    return { repo, branch, at, expires, sig: hmac(KEY, repo, branch, at, expires) };
  };
  const urlOf = (s: ReturnType<typeof signed>, path = s.repo) =>
    `/repos/${path}/-/archive${query({ branch: s.branch, at: s.at, expires: s.expires, sig: s.sig })}`;

  it("serves the archive to a request with no credentials at all, byte for byte the signed-in one", async () => {
    const s = signed();
    const res = await download(app, urlOf(s));
    const entries = await archiveOf(res, `docs-${head}.tar.gz`);
    expect(entries.map((e) => [e.name, e.data.toString()])).toEqual([[`docs-${head}/a.txt`, "two\n"]]);
    const authed = await downloadAs(app, fx.owner, `${fx.base}/archive?branch=main&at=${head}`);
    expect(sha256hex(res.bytes)).toBe(sha256hex(authed.bytes));
  });

  it("pins what it signed: an old sequence and another branch", async () => {
    const old = await archiveOf(await download(app, urlOf(signed({ at: v1 }))), `docs-${v1}.tar.gz`);
    expect(old.map((e) => e.data.toString())).toEqual(["one\n"]);
    const branchHead = okBody(
      await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "feature" },
      }),
    ).head_sequence;
    const onBranch = await archiveOf(
      await download(app, urlOf(signed({ branch: "feature", at: branchHead }))),
      `docs-feature-${branchHead}.tar.gz`,
    );
    expect(onBranch.map((e) => e.name)).toEqual([
      `docs-feature-${branchHead}/a.txt`,
      `docs-feature-${branchHead}/b.txt`,
    ]);
  });

  it("ignores credentials, even bad ones, on the presigned form", async () => {
    const res = await download(app, urlOf(signed()), { authorization: "Bearer garbage" });
    expect(res.status).toBe(200);
  });

  it("accepts the URL built by presignArchiveUrl, whose sig is the spec's HMAC", async () => {
    const url = await presignArchiveUrl(app.server.ctx, {
      repo: fx.repo,
      branch: "feature",
      sequence: v1,
      baseUrl: `${app.url}/`,
    });
    const parsed = new URL(url);
    expect(parsed.origin + parsed.pathname).toBe(`${app.url}/repos/${fx.repo}/-/archive`);
    const q = Object.fromEntries(parsed.searchParams);
    expect(Object.keys(q).sort()).toEqual(["at", "branch", "expires", "sig"]);
    expect(q["branch"]).toBe("feature");
    expect(Number(q["at"])).toBe(v1);
    const expires = Number(q["expires"]);
    expect(expires - now()).toBeGreaterThan(3590);
    expect(expires - now()).toBeLessThanOrEqual(3600);
    expect(q["sig"]).toBe(hmac(KEY, fx.repo, "feature", v1, expires));
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="docs-feature-${v1}.tar.gz"`);
    await res.arrayBuffer();

    const short = await presignArchiveUrl(app.server.ctx, {
      repo: fx.repo,
      branch: "main",
      sequence: head,
      ttlSeconds: 60,
      baseUrl: app.url,
    });
    expect(Number(new URL(short).searchParams.get("expires")) - now()).toBeLessThanOrEqual(60);
  });

  it("refuses a tampered, truncated, overlong, non-hex or empty sig with 403 SIGNATURE_INVALID", async () => {
    const s = signed();
    const variants = [
      flip(s.sig),
      s.sig.slice(0, 63),
      s.sig.slice(0, 32),
      `${s.sig}00`,
      `${s.sig}0`,
      "z".repeat(64),
      `${s.sig.slice(0, 62)}zz`,
      "",
      s.sig.toUpperCase().replace(/^./, (c) => (c === "A" ? "B" : "A")),
      Buffer.from(s.sig, "hex").toString("base64"),
    ];
    for (const sig of variants) {
      const res = await anonymousGet(app, urlOf({ ...s, sig }));
      expectError(res, 403, "SIGNATURE_INVALID");
    }
    // Upper-case hex is the same signature.
    expect((await download(app, urlOf({ ...s, sig: s.sig.toUpperCase() }))).status).toBe(200);
  });

  it("refuses an expired URL with 403 URL_EXPIRED, and a stretched expiry as a bad signature", async () => {
    const expired = signed({ expires: now() - 5 });
    expectError(await anonymousGet(app, urlOf(expired)), 403, "URL_EXPIRED");
    const stretched = { ...expired, expires: now() + 3600 };
    expectError(await anonymousGet(app, urlOf(stretched)), 403, "SIGNATURE_INVALID");
  });

  it("refuses a replay against another branch, sequence or repo", async () => {
    const s = signed({ at: v1 });
    expectError(await anonymousGet(app, urlOf({ ...s, branch: "feature" })), 403, "SIGNATURE_INVALID");
    expectError(await anonymousGet(app, urlOf({ ...s, at: head })), 403, "SIGNATURE_INVALID");
    expectError(await anonymousGet(app, urlOf({ ...s, at: 0 })), 403, "SIGNATURE_INVALID");
    expectError(await anonymousGet(app, urlOf(s, other.repo)), 403, "SIGNATURE_INVALID");
    // A forged URL is told the same for a repo that does not exist: existence is not revealed.
    expectError(await anonymousGet(app, urlOf(s, `${fx.org}/nothing`)), 403, "SIGNATURE_INVALID");
    const forged = signed({ repo: `${fx.org}/nothing` });
    expectError(
      await anonymousGet(app, urlOf({ ...forged, sig: flip(forged.sig) }, forged.repo)),
      403,
      "SIGNATURE_INVALID",
    );
  });

  it("needs branch and at in the presigned form (400), and sig and expires together", async () => {
    const s = signed();
    const paths = [
      `/repos/${fx.repo}/-/archive${query({ at: s.at, expires: s.expires, sig: s.sig })}`,
      `/repos/${fx.repo}/-/archive${query({ branch: s.branch, expires: s.expires, sig: s.sig })}`,
      `/repos/${fx.repo}/-/archive${query({ expires: s.expires, sig: s.sig })}`,
      `/repos/${fx.repo}/-/archive${query({ branch: s.branch, at: s.at, sig: s.sig })}`,
      `/repos/${fx.repo}/-/archive${query({ branch: s.branch, at: s.at, expires: s.expires })}`,
      `/repos/${fx.repo}/-/archive${query({ branch: s.branch, at: s.at, expires: "soon", sig: s.sig })}`,
    ];
    for (const p of paths) expectError(await anonymousGet(app, p), 400, "VALIDATION_FAILED");
  });

  it("answers a genuinely signed URL for a branch or sequence that is not there like any read", async () => {
    expectError(await anonymousGet(app, urlOf(signed({ branch: "nope" }))), 404, "BRANCH_NOT_FOUND");
    expectError(await anonymousGet(app, urlOf(signed({ at: head + 50 }))), 400, "SEQUENCE_OUT_OF_RANGE");
  });

  it("answers 404 to a genuinely signed URL whose repo has been deleted since", async () => {
    const gone = await repoWithOwner(app);
    const s = signed({ repo: gone.repo, at: 0 });
    expect((await download(app, urlOf(s))).status).toBe(200);
    expect((await gone.client.delete(`/repos/${gone.repo}`)).status).toBe(204);
    expectError(await anonymousGet(app, urlOf(s)), 404, "REPO_NOT_FOUND");
  });

  it("verifyArchiveSignature checks in constant time against the configured key", async () => {
    const ctx = app.server.ctx;
    expect((await archiveSigningKey(ctx)).equals(KEY)).toBe(true);
    const s = signed();
    const grant = { repo: s.repo, branch: s.branch, sequence: s.at, expires: s.expires };
    await expect(verifyArchiveSignature(ctx, { ...grant, sig: s.sig })).resolves.toBeUndefined();
    await expect(verifyArchiveSignature(ctx, { ...grant, sig: flip(s.sig) })).rejects.toMatchObject({
      code: "SIGNATURE_INVALID",
    });
    await expect(
      verifyArchiveSignature(ctx, { ...grant, sig: s.sig }, (s.expires + 1) * 1000),
    ).rejects.toMatchObject({ code: "URL_EXPIRED" });
    // Valid up to and including the second named by expires.
    await expect(
      verifyArchiveSignature(ctx, { ...grant, sig: s.sig }, s.expires * 1000 + 999),
    ).resolves.toBeUndefined();
    // The configured key is used as is: nothing is written to server_secrets.
    expect(await app.sql("SELECT name FROM server_secrets WHERE name = $1", [ARCHIVE_KEY_NAME])).toEqual([]);
  });
});

describe("presigned archive URLs with a generated key", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("creates one 32-byte key in server_secrets, shared by every instance on the database", async () => {
    expect(await app.sql("SELECT name FROM server_secrets WHERE name = $1", [ARCHIVE_KEY_NAME])).toEqual([]);
    // A second instance on the same database, starting its first signature at the same moment.
    const second = await startServer(
      {
        DATABASE_URL: app.databaseUrl,
        PORT: "0",
        OIDC_ISSUER: app.idp.issuer,
        LOG_LEVEL: "error",
        SVC_BLOB_LOCAL_DIR: app.server.ctx.config.SVC_BLOB_LOCAL_DIR,
      },
      { logTo: new Writable({ write: (_chunk, _enc, done) => done() }) },
    );
    try {
      const fx = await repoWithOwner(app);
      const head = await commit(fx, "main", { "k.txt": "k\n" });
      const [k1, k2] = await Promise.all([archiveSigningKey(app.server.ctx), archiveSigningKey(second.ctx)]);
      expect(k1.length).toBe(32);
      expect(k2.equals(k1)).toBe(true);
      const rows = await app.sql<{ secret: Buffer }>("SELECT secret FROM server_secrets WHERE name = $1", [
        ARCHIVE_KEY_NAME,
      ]);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.secret.equals(k1)).toBe(true);

      // Signed by one instance, served by the other; and the spec's HMAC under the stored key.
      const url = await presignArchiveUrl(second.ctx, {
        repo: fx.repo,
        branch: "main",
        sequence: head,
        baseUrl: app.url,
      });
      const u = new URL(url);
      expect(u.searchParams.get("sig")).toBe(
        hmac(k1, fx.repo, "main", head, Number(u.searchParams.get("expires"))),
      );
      const res = await download(app, u.pathname + u.search);
      expect((await archiveOf(res, `docs-${head}.tar.gz`)).map((e) => e.name)).toEqual([
        `docs-${head}/k.txt`,
      ]);
      // Cached in process: the same promise's key, no new row.
      expect((await archiveSigningKey(app.server.ctx)).equals(k1)).toBe(true);
      expect(await app.sql("SELECT count(*)::int AS n FROM server_secrets")).toEqual([{ n: 1 }]);
    } finally {
      await second.close();
    }
  });
});

describe("SVC_ARCHIVE_SIGNING_KEY", () => {
  it("reads hex, base64 and base64url keys of 32 bytes or more", () => {
    const key = randomBytes(48);
    expect(loadConfig({ SVC_ARCHIVE_SIGNING_KEY: key.toString("hex") }).SVC_ARCHIVE_SIGNING_KEY).toEqual(key);
    expect(loadConfig({ SVC_ARCHIVE_SIGNING_KEY: key.toString("base64") }).SVC_ARCHIVE_SIGNING_KEY).toEqual(
      key,
    );
    expect(
      loadConfig({ SVC_ARCHIVE_SIGNING_KEY: key.toString("base64url") }).SVC_ARCHIVE_SIGNING_KEY,
    ).toEqual(key);
    const k32 = randomBytes(32);
    expect(
      loadConfig({ SVC_ARCHIVE_SIGNING_KEY: ` ${k32.toString("base64")} ` }).SVC_ARCHIVE_SIGNING_KEY,
    ).toEqual(k32);
    expect(loadConfig({}).SVC_ARCHIVE_SIGNING_KEY).toBeUndefined();
    expect(loadConfig({ SVC_ARCHIVE_SIGNING_KEY: "" }).SVC_ARCHIVE_SIGNING_KEY).toBeUndefined();
  });

  it("refuses a short or malformed key without printing it", () => {
    const short = randomBytes(31).toString("hex");
    for (const value of [short, randomBytes(31).toString("base64"), "not a key!", "ab:cd"]) {
      let error: unknown;
      try {
        loadConfig({ SVC_ARCHIVE_SIGNING_KEY: value });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain("SVC_ARCHIVE_SIGNING_KEY");
      expect((error as Error).message).not.toContain(value);
    }
  });
});
