import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../cli/client/index.ts";
import { fetchLogGet, fetchLogPost } from "../../cli/transparency/contact.ts";
import { CheckpointStore } from "../../cli/transparency/store.ts";
import { verifyLog } from "../../cli/transparency/verify.ts";
import {
  loadWitnessKey,
  type WitnessKey,
  witnessRepo,
  witnessState,
} from "../../cli/transparency/witness.ts";
import { clientRemote } from "../../cli/workcopy/remote.ts";
import { checkpointText, parseNote, parseVerifierKey } from "../../shared/transparency/note.ts";
import { expectExit, quireAs, tempHome } from "../cli/support.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, expectOk, type RepoHandle, useFixture, world } from "../support/world.ts";

// Witnesses (docs/verifiable-history.md, "Witnesses"): the CLI's witness cosigns checkpoints it
// verified, the server serves the cosignatures with the checkpoint, and readers that require one
// (the CLI's `verify --witness`, Go's golang.org/x/mod/sumdb/note through emulators/tlog-verify)
// refuse a checkpoint without it. QUIRE_TLOG_VERIFY names another build of the Go program.
const GO_VERIFIER =
  process.env["QUIRE_TLOG_VERIFY"] ?? path.resolve(import.meta.dirname, "../../.tools/bin/tlog-verify");
const run = promisify(execFile);

const app = useFixture(startTestApp);
let dir: string;
let logKey: string;

beforeAll(async () => {
  if (!existsSync(GO_VERIFIER)) throw new Error(`${GO_VERIFIER} is missing: run npm run emulators`);
  dir = await mkdtemp(path.join(os.tmpdir(), "witness-"));
  logKey = ((await app.anonymous.get("/.well-known/quire-log-key")).body as string).trim();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const freshDir = () => mkdtemp(path.join(dir, "w-"));

/** A witness with its own key and state, signed in as `identity` (a reader of the repos it watches). */
async function witnessAs(identity: string, name = "witness.example/w1") {
  const home = await freshDir();
  const key = await loadWitnessKey(home, name);
  const headers = { authorization: `Bearer ${await app.idp.token(identity)}` };
  const io = { get: fetchLogGet(app.url, headers), post: fetchLogPost(app.url, headers) };
  const state = witnessState(home);
  return { key, home, state, witness: (repo: string) => witnessRepo(io, state, key, app.url, repo) };
}

/** Runs the Go verifier against the repo's current checkpoint, requiring each witness key too. */
async function goVerify(repo: RepoHandle, witnesses: string[]): Promise<{ ok: boolean; out: string }> {
  const args = ["-server", app.url, "-repo", repo.repo, "-key", logKey];
  for (const w of witnesses) args.push("-witness", w);
  const env = { ...process.env, QUIRE_TOKEN: await app.idp.token(repo.owner) };
  try {
    return { ok: true, out: (await run(GO_VERIFIER, args, { env })).stdout.trim() };
  } catch (e) {
    return { ok: false, out: String((e as { stdout?: string }).stdout ?? e).trim() };
  }
}

/** The CLI reader's `quire verify`, with a checkpoint store of its own. */
async function reader(repo: RepoHandle) {
  const token = await app.idp.token(repo.owner);
  const get = fetchLogGet(app.url, { authorization: `Bearer ${token}` });
  const store = new CheckpointStore(await freshDir());
  const remote = clientRemote(createClient({ server: app.url, token }), async () => token, undefined);
  return (witnesses: string[]) => verifyLog(remote, get, store, repo.repo, [], witnesses);
}

const checkpointOf = async (repo: RepoHandle) => {
  const res = await repo.client.get(`${repo.base}/checkpoint`);
  expectOk(res, 200);
  return res.body as string;
};

const cosignatureRows = (repo: RepoHandle) =>
  app.sql("SELECT size, witness_key FROM tlog_cosignatures WHERE repo_id = $1 ORDER BY size, witness_key", [
    repo.repoId,
  ]);

/** A note over `text` carrying `key`'s signature line. */
const cosigned = (text: string, key: WitnessKey) => `${text}\n${key.sign(text)}`;

const textOf = (note: string) => parseNote(note).text;

describe("a witness cosigns checkpoints it verified", () => {
  let repo: RepoHandle<"reader">;
  beforeAll(async () => {
    repo = await world(app).repo({ people: { reader: "reader" } });
    await repo.commit("main", { "a.md": "a" });
    await repo.commit("main", { "a.md": "b" });
  });

  it("prints and keeps one key in the verifier-key format, private to its owner", async () => {
    const home = await freshDir();
    const first = await loadWitnessKey(home, "host.example/witness");
    const again = await loadWitnessKey(home, "another-name");
    expect(again.vkey).toBe(first.vkey);
    expect(first.vkey).toMatch(/^host\.example\/witness\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect(parseVerifierKey(first.vkey).name).toBe("host.example/witness");
    expect((await stat(path.join(home, "witness-key.json"))).mode & 0o777).toBe(0o600);
  });

  it("serves the cosignature with the checkpoint, and Go's note package verifies both keys", async () => {
    const w = await witnessAs(repo.people.reader);
    const done = await w.witness(repo.repo);
    expect(done).toMatchObject({ repo: repo.repo, size: 2, previous_size: null });
    const note = await checkpointOf(repo);
    expect(parseNote(note).signatures.map((s) => s.name)).toEqual([new URL(app.url).host, w.key.name]);
    const go = await goVerify(repo, [w.key.vkey]);
    expect(go).toEqual({ ok: true, out: expect.stringMatching(/^verified \S+ 2 /) });
    const r = await (await reader(repo))([w.key.vkey]);
    expect(r?.audit.witnesses).toEqual([w.key.name]);
  });

  it("refuses, in both readers, a checkpoint its required witness has not cosigned", async () => {
    const w = await witnessAs(repo.people.reader, "witness.example/w2");
    await w.witness(repo.repo);
    const verify = await reader(repo);
    await verify([w.key.vkey]);
    await repo.commit("main", { "a.md": "c" });
    const other = await loadWitnessKey(await freshDir(), "witness.example/never");
    const go = await goVerify(repo, [w.key.vkey]);
    expect(go).toEqual({ ok: false, out: "refused: checkpoint: no signature by witness.example/w2" });
    expect((await goVerify(repo, [other.vkey])).ok).toBe(false);
    await expect(verify([w.key.vkey])).rejects.toThrow(
      /has no valid cosignature by the witness witness\.example\/w2: the checkpoint carries no signature/,
    );
    // The witness catches up, proving size 3 extends the size 2 it cosigned: both readers accept.
    expect(await w.witness(repo.repo)).toMatchObject({ size: 3, previous_size: 2 });
    expect((await goVerify(repo, [w.key.vkey])).ok).toBe(true);
    expect((await verify([w.key.vkey]))?.audit.previous?.checkpoint.size).toBe(2);
  });

  it("refuses to cosign a log rewritten since the checkpoint it cosigned, and posts nothing", async () => {
    const forked = await world(app).repo();
    await forked.commit("main", { "a.md": "a" });
    await forked.commit("main", { "a.md": "b" });
    const w = await witnessAs(forked.owner);
    await w.witness(forked.repo);
    const forged = createHash("sha256").update("forged").digest("hex");
    await app.sql("UPDATE commits SET hash = $2 WHERE repo_id = $1 AND sequence = 1", [
      forked.repoId,
      forged,
    ]);
    await app.sql("SELECT tlog_build($1)", [forked.repoId]);
    await forked.commit("main", { "a.md": "c" });
    await expect(w.witness(forked.repo)).rejects.toThrow(/does not extend the one seen before/);
    expect(await cosignatureRows(forked)).toEqual([{ size: 2, witness_key: w.key.vkey }]);
  });
});

describe("the server stores only cosignatures of checkpoints it signed", () => {
  let repo: RepoHandle<"reader">;
  let key: WitnessKey;
  const post = (who: RepoHandle["client"], body: unknown, base = repo.base) =>
    who.post(`${base}/checkpoint/cosignatures`, body);
  beforeAll(async () => {
    repo = await world(app).repo({ people: { reader: "reader" } });
    await repo.commit("main", { "a.md": "a" });
    await repo.commit("main", { "a.md": "b" });
    key = await loadWitnessKey(await freshDir(), "witness.example/direct");
  });

  it("stores a valid cosignature of an earlier size and answers what it stored", async () => {
    const text = checkpointText({ ...(await textParts(repo, 2)), size: 2 });
    const res = await post(repo.as("reader"), { witness_key: key.vkey, checkpoint: cosigned(text, key) });
    expectOk(res, 201);
    expect(res.body).toMatchObject({
      size: 2,
      witness_key: key.vkey,
      origin: `${new URL(app.url).host}/${repo.repo}`,
    });
    await repo.commit("main", { "a.md": "c" });
    // Size 2 is no longer the latest: the checkpoint of size 3 carries only the log's signature.
    expect(parseNote(await checkpointOf(repo)).signatures).toHaveLength(1);
    expect(await cosignatureRows(repo)).toEqual([{ size: 2, witness_key: key.vkey }]);
  });

  it("refuses a signature that does not verify against the witness key", async () => {
    const text = textOf(await checkpointOf(repo));
    const impostor = await loadWitnessKey(await freshDir(), key.name);
    const res = await post(repo.client, { witness_key: key.vkey, checkpoint: cosigned(text, impostor) });
    // Same name, another key: the line's key hash is not the witness key's.
    expectError(res, 403, "SIGNATURE_INVALID");
    const line = key.sign(text).replace(/.{8}\n$/, "AAAAAAA=\n");
    expectError(
      await post(repo.client, { witness_key: key.vkey, checkpoint: `${text}\n${line}` }),
      403,
      "SIGNATURE_INVALID",
    );
    expect(await cosignatureRows(repo)).toHaveLength(1);
  });

  it("refuses a checkpoint the log never signed: another root, a size beyond the log, another repo", async () => {
    const current = textOf(await checkpointOf(repo));
    const [origin, size] = current.split("\n");
    const forgedRoot = `${origin}\n${size}\n${createHash("sha256").update("x").digest("base64")}\n`;
    const beyond = `${origin}\n9\n${current.split("\n")[2]}\n`;
    const other = await world(app).repo();
    for (const [text, base] of [
      [forgedRoot, repo.base],
      [beyond, repo.base],
      [current, other.base],
    ] as const) {
      const res = await post(
        base === repo.base ? repo.client : other.client,
        { witness_key: key.vkey, checkpoint: cosigned(text, key) },
        base,
      );
      expectError(res, 409, "CHECKPOINT_UNKNOWN");
    }
    expect(await cosignatureRows(repo)).toHaveLength(1);
    expect(await cosignatureRows(other)).toHaveLength(0);
  });

  it("refuses an unknown repo, a caller who may not read it, and anyone signed out", async () => {
    const body = { witness_key: key.vkey, checkpoint: cosigned(textOf(await checkpointOf(repo)), key) };
    expectError(await post(repo.client, body, "/repos/nowhere/none/-"), 404, "REPO_NOT_FOUND");
    expectError(await post(app.as("stranger@example.com"), body), 404, "REPO_NOT_FOUND");
    expectError(await post(app.anonymous, body), 401, "UNAUTHENTICATED");
  });

  it("refuses a malformed key or note, a witness under the log's name, and unknown fields", async () => {
    const text = textOf(await checkpointOf(repo));
    const note = cosigned(text, key);
    const logNamed = await loadWitnessKey(await freshDir(), new URL(app.url).host);
    for (const body of [
      { witness_key: "not-a-key", checkpoint: note },
      { witness_key: key.vkey, checkpoint: "no blank line" },
      { witness_key: key.vkey, checkpoint: text },
      { witness_key: logNamed.vkey, checkpoint: cosigned(text, logNamed) },
      { witness_key: key.vkey, checkpoint: note, extra: 1 },
    ])
      expectError(await post(repo.client, body), 400, "VALIDATION_FAILED");
    expect(await cosignatureRows(repo)).toHaveLength(1);
  });
});

/** The origin and root of the repo's checkpoint of `size`, from a consistency-free read: its chain. */
async function textParts(repo: RepoHandle, size: number) {
  const text = textOf(await checkpointOf(repo));
  const [origin, current, root] = text.split("\n");
  if (Number(current) !== size) throw new Error(`the repo is at ${current}, not ${size}`);
  return { origin: origin as string, root: Buffer.from(root as string, "base64") };
}

describe("the CLI's witness and reader, as commands", () => {
  it("`quire witness key`, `quire witness <repo>`, and `quire verify --witness` or QUIRE_REQUIRE_WITNESS", async () => {
    const repo = await world(app).repo({ people: { reader: "reader" } });
    await repo.commit("main", { "a.md": "a" });
    const [witnessHome, readerHome] = [await tempHome(), await tempHome()];
    try {
      const witness = quireAs(app, witnessHome.dir, repo.people.reader);
      const owner = quireAs(app, readerHome.dir, repo.owner);
      const vkey = expectExit(await witness(["witness", "key", "--name", "cli.example/w"]), 0).stdout.trim();
      expect(parseVerifierKey(vkey).name).toBe("cli.example/w");
      expect(expectExit(await witness(["witness", "key"]), 0).stdout.trim()).toBe(vkey);
      const cosigned = expectExit(await witness(["witness", repo.repo]), 0);
      expect(cosigned.stdout).toMatch(/^cosigned \S+ at size 1 \(root \S+\), first sight$/m);
      const verified = expectExit(await owner(["verify", repo.repo, "--witness", vkey]), 0);
      expect(verified.stdout).toContain("cosigned by the witness cli.example/w: signature valid");
      await repo.commit("main", { "a.md": "b" });
      const required = { env: { QUIRE_REQUIRE_WITNESS: vkey } };
      const refused = expectExit(await owner(["branches", "list", repo.repo], required), 1);
      expect(refused.stderr).toContain("has no valid cosignature by the witness cli.example/w");
      expectExit(await witness(["witness", repo.repo]), 0);
      expectExit(await owner(["branches", "list", repo.repo], required), 0);
      expectExit(await witness(["witness"]), 2);
    } finally {
      await Promise.all([witnessHome.remove(), readerHome.remove()]);
    }
  });
});
