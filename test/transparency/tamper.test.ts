import { execFile } from "node:child_process";
import { createHash, createPrivateKey, generateKeyPairSync, sign } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../cli/client/index.ts";
import { auditRepo, type LogGet } from "../../cli/transparency/audit.ts";
import { fetchLogGet } from "../../cli/transparency/contact.ts";
import { CheckpointStore } from "../../cli/transparency/store.ts";
import { verifyLog } from "../../cli/transparency/verify.ts";
import { clientRemote } from "../../cli/workcopy/remote.ts";
import { checkpointText, parseCheckpointText, signatureLine } from "../../shared/transparency/note.ts";
import { rawEd25519 } from "../../shared/transparency/signer.ts";
import { startTestApp } from "../support/app.ts";
import { type RepoHandle, useFixture, world } from "../support/world.ts";

// Each tampering is refused by two verifiers: Go's golang.org/x/mod/sumdb (tlog and note), built
// from the Go module proxy into .tools/bin by emulators/install.sh (emulators/tlog-verify), and
// the CLI's own (cli/transparency/). QUIRE_TLOG_VERIFY names another build of the Go program, for
// a checkout whose tools folder is shared and older than this one.
const GO_VERIFIER =
  process.env["QUIRE_TLOG_VERIFY"] ?? path.resolve(import.meta.dirname, "../../.tools/bin/tlog-verify");
const run = promisify(execFile);

const app = useFixture(startTestApp);
let dir: string;
let vkey: string;

beforeAll(async () => {
  if (!existsSync(GO_VERIFIER)) throw new Error(`${GO_VERIFIER} is missing: run npm run emulators`);
  dir = await mkdtemp(path.join(os.tmpdir(), "tlog-"));
  vkey = ((await app.anonymous.get("/.well-known/quire-log-key")).body as string).trim();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the Go verifier; `old` is a checkpoint note the current one must extend. */
async function goVerify(repo: RepoHandle, old?: string): Promise<{ ok: boolean; out: string }> {
  const args = ["-server", app.url, "-repo", repo.repo, "-key", vkey];
  if (old !== undefined) {
    const file = path.join(dir, `old-${Math.random().toString(16).slice(2)}`);
    await writeFile(file, old);
    args.push("-old", file);
  }
  const env = { ...process.env, QUIRE_TOKEN: await app.idp.token(repo.owner) };
  try {
    const { stdout } = await run(GO_VERIFIER, args, { env });
    return { ok: true, out: stdout.trim() };
  } catch (e) {
    return { ok: false, out: String((e as { stdout?: string }).stdout ?? e).trim() };
  }
}

/** The CLI's verifier, with a checkpoint store of its own. */
async function ours(repo: RepoHandle) {
  const token = await app.idp.token(repo.owner);
  const get: LogGet = fetchLogGet(app.url, { authorization: `Bearer ${token}` });
  const store = new CheckpointStore(await mkdtemp(path.join(dir, "cli-")));
  const remote = clientRemote(createClient({ server: app.url, token }), async () => token, undefined);
  return {
    store,
    audit: () => auditRepo(get, store, app.url, repo.repo, new Date()),
    verify: (sequences: number[] = []) => verifyLog(remote, get, store, repo.repo, sequences),
  };
}

const checkpointOf = async (repo: RepoHandle) =>
  (await repo.client.get(`${repo.base}/checkpoint`)).body as string;

async function repoWithHistory(): Promise<RepoHandle> {
  const repo = await world(app).repo();
  const side = await repo.branch("side", { files: { "s.md": "s" } });
  for (let i = 0; i < 5; i++) await repo.commit("main", { "m.md": `main ${i}` }, `main ${i}`);
  await side.commit({ "s.md": "s2" });
  return repo; // 7 commits
}

/** Changes commit `sequence`'s message and hash as a server rewriting it would. */
async function rewriteCommit(repo: RepoHandle, sequence: number): Promise<void> {
  const forged = createHash("sha256").update(`forged ${sequence}`).digest("hex");
  await app.sql("UPDATE commits SET message = 'rewritten', hash = $3 WHERE repo_id = $1 AND sequence = $2", [
    repo.repoId,
    sequence,
    forged,
  ]);
}

const rebuildLog = (repo: RepoHandle) => app.sql("SELECT tlog_build($1)", [repo.repoId]);

describe("the log verified by Go's sumdb packages and by the CLI", () => {
  it("both accept an honest log, and a later checkpoint that extends an earlier one", async () => {
    const repo = await repoWithHistory();
    const first = await checkpointOf(repo);
    const cli = await ours(repo);
    await cli.audit();
    await repo.commit("main", { "later.md": "later" });
    const go = await goVerify(repo, first);
    expect(go).toEqual({ ok: true, out: expect.stringMatching(/^verified \S+\/\S+ 8 [A-Za-z0-9+/]{43}=$/) });
    const r = await cli.verify([2]);
    expect(r?.audit.previous?.checkpoint.size).toBe(7);
    expect(r?.commits.map((c) => [c.sequence, c.head_of])).toEqual([
      [2, null],
      [7, "side"],
      [8, "main"],
    ]);
  });

  it("both refuse a commit rewritten behind the log's back", async () => {
    // 17 commits: the first 16 leaves are a block whose node the log stores (merkle.ts), so
    // rewriting commit 3 leaves the stored node, and the signed root over it, as they were.
    const repo = await repoWithHistory();
    for (let i = 0; i < 10; i++) await repo.commit("main", { "m.md": `more ${i}` });
    const cli = await ours(repo);
    await cli.audit();
    const seen = await checkpointOf(repo);
    await rewriteCommit(repo, 3);
    expect(await checkpointOf(repo)).toBe(seen);
    const go = await goVerify(repo);
    expect(go.ok).toBe(false);
    // The first commit it checks whose proof passes through leaf 2 (the proofs of 1 to 4 do).
    expect(go.out).toMatch(/commit [1-4] \(.*is not leaf [0-3] of the log of 17 leaves/);
    await expect(cli.verify([3])).rejects.toThrow(
      /commit 3 of \S+ \(hash [0-9a-f]{64}\) is not in the signed log/,
    );
    // A leaf past the last stored block is read from its commit: rewriting it changes the root,
    // and a reader who saw the honest checkpoint is refused the new one.
    await rewriteCommit(repo, 17);
    expect((await goVerify(repo, seen)).out).toContain("does not extend the one of 17");
    await expect(cli.audit()).rejects.toThrow(/does not extend the one seen before/);
  });

  it("both refuse a history rewritten with its log rebuilt and re-signed", async () => {
    const repo = await repoWithHistory();
    const seen = await checkpointOf(repo);
    const cli = await ours(repo);
    await cli.audit();
    await rewriteCommit(repo, 3);
    await rebuildLog(repo);
    const now = await checkpointOf(repo);
    expect(parseCheckpointText(now).size).toBe(7);
    expect(now).not.toBe(seen);
    expect(await goVerify(repo)).toMatchObject({ ok: true }); // alone, the new log is self-consistent
    const go = await goVerify(repo, seen);
    expect(go.ok).toBe(false);
    expect(go.out).toContain("does not extend the one of 7");
    await expect(cli.audit()).rejects.toThrow(
      /does not extend the one seen before .*checkpoint seen .*\(size 7, root \S+\), checkpoint now \(size 7, root \S+\)/,
    );
  });

  it("both refuse a log with a leaf dropped, even once it has grown back past its old size", async () => {
    const repo = await repoWithHistory();
    await repo.commit("main", { "m.md": "eighth" });
    const cli = await ours(repo);
    await cli.audit();
    const seen = await checkpointOf(repo);
    // Drop commit 4's leaf: later commits move down one sequence, the log is rebuilt, and two new
    // commits take it past its old size of 8.
    await app.sql("DELETE FROM commits WHERE repo_id = $1 AND sequence = 4", [repo.repoId]);
    await app.sql("UPDATE commits SET sequence = -(sequence - 1) WHERE repo_id = $1 AND sequence > 4", [
      repo.repoId,
    ]);
    await app.sql("UPDATE commits SET sequence = -sequence WHERE repo_id = $1 AND sequence < 0", [
      repo.repoId,
    ]);
    await app.sql("UPDATE repos SET last_sequence = last_sequence - 1 WHERE id = $1", [repo.repoId]);
    await app.sql(
      "UPDATE branches SET head_sequence = head_sequence - 1 WHERE repo_id = $1 AND head_sequence > 4",
      [repo.repoId],
    );
    await rebuildLog(repo);
    // New paths: file_changes still hold the old sequences of m.md's changes.
    await repo.commit("main", { "n.md": "ninth" });
    await repo.commit("main", { "o.md": "tenth" });
    expect(parseCheckpointText(await checkpointOf(repo)).size).toBe(9);
    const go = await goVerify(repo, seen);
    expect(go.ok).toBe(false);
    expect(go.out).toContain("does not extend the one of 8");
    await expect(cli.audit()).rejects.toThrow(/consistency proof does not hold.*size 8.*size 9/);
  });

  it("both refuse a forked checkpoint: one signed with the log's key over another root", async () => {
    const repo = await repoWithHistory();
    const honest = parseCheckpointText(await checkpointOf(repo));
    const [key] = await app.sql<{ private_pem: string }>("SELECT private_pem FROM tlog_signing_keys");
    const privateKey = createPrivateKey(key!.private_pem);
    const name = new URL(app.url).host;
    const fork = checkpointText({ ...honest, root: createHash("sha256").update("fork").digest() });
    const forkNote = `${fork}\n${signatureLine(name, rawEd25519(privateKey), sign(null, Buffer.from(fork), privateKey))}`;
    // A reader shown the fork yesterday meets the honest log today.
    const go = await goVerify(repo, forkNote);
    expect(go.ok).toBe(false);
    expect(go.out).toContain("does not extend the one of 7");
    const cli = await ours(repo);
    await cli.store.pinKey(app.url, vkey);
    await cli.store.remember(app.url, repo.repo, forkNote, new Date("2026-11-25T00:00:00Z"));
    await expect(cli.audit()).rejects.toThrow(
      /checkpoint seen 2026-11-25T00:00:00.000Z \(size 7, root \S+\), checkpoint now \(size 7, root \S+\)/,
    );
  });

  it("both refuse a checkpoint signed by another key", async () => {
    const repo = await repoWithHistory();
    const other = generateKeyPairSync("ed25519").privateKey;
    const text = checkpointText(parseCheckpointText(await checkpointOf(repo)));
    const name = new URL(app.url).host;
    const forged = `${text}\n${signatureLine(name, rawEd25519(other), sign(null, Buffer.from(text), other))}`;
    const go = await goVerify(repo, forged);
    expect(go.ok).toBe(false);
    expect(go.out).toBe("refused: old checkpoint: note has no verifiable signatures");
    const cli = await ours(repo);
    await cli.store.pinKey(app.url, vkey);
    await cli.store.remember(app.url, repo.repo, forged, new Date());
    await expect(cli.audit()).rejects.toThrow(/carries no signature by/);
  });
});
