import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { type AddressInfo, connect, createServer } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { STALE_AFTER_MS } from "../../shared/ci/jobs/queue.ts";
import { reapOnce } from "../../shared/ci/scheduler/timers.ts";
import { storedJob } from "../ci/scheduler/scheduler-support.ts";
import { WORKER_TOKEN } from "../ci/support.ts";
import { pushBusyboxImage, startRegistry } from "../support/oci-registry.ts";
import { policies } from "../support/policies.ts";
import { commit, createBranch, installPolicies, repoWithOwner, useFixture } from "../support/world.ts";
import { checkRunsAt, queuedJob, readLog, spawnWorker, startWorkerApp } from "./support.ts";

/**
 * The whole of CI with nothing faked in the worker's path: the server as `npm start` runs it, a
 * real OCI registry on 127.0.0.1 with an image the tests build from Debian's busybox, and the
 * worker as its own process (`worker/main.ts --once`) pulling that image and running each step in
 * bubblewrap. Then a `ci_must_pass` policy decides the merge from what the worker reported.
 */

const app = useFixture(() => startWorkerApp());
const fx = useFixture(() => repoWithOwner(app));
const registry = useFixture(startRegistry);
const scratch = useFixture(async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "quire-e2e-"));
  return { dir, close: () => rm(dir, { recursive: true, force: true }) };
});

/**
 * A TCP listener on this machine's first non-loopback address (127.0.0.1 when it has none): the
 * host itself can connect to it (checked), a check with the network off must not.
 */
const listener = useFixture(async () => {
  const host =
    Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal)?.address ?? "127.0.0.1";
  const state = { connections: 0 };
  const server = createServer((socket) => {
    state.connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    host,
    port,
    get connections() {
      return state.connections;
    },
    reset() {
      state.connections = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
});

/** A file on the host that no check may read, and a path no check may create. */
const SECRET = `host-secret-${randomBytes(8).toString("hex")}`;
const probe = `/quire-escape-${randomBytes(4).toString("hex")}`;
const TIMEOUT = "8s";

function ciYaml(image: string, secretFile: string): string {
  return `on:
  push:
    branches: ["feature*"]
checks:
  - name: e2e/pass
    image: ${image}
    steps:
      - 'test -f /src/notes/a.md && cat /src/notes/a.md'
      - 'echo "token: $QUIRE_JOB_TOKEN"; test -s "$QUIRE_JOB_TOKEN_FILE" && echo "token file: $QUIRE_JOB_TOKEN_FILE"'
      - 'if [ -e /src/nap ]; then sleep 5; fi'
  - name: e2e/fail
    image: ${image}
    steps:
      - 'echo about to fail'
      - 'if [ -e /src/broken ]; then exit 3; fi'
      - 'echo fixed'
  - name: e2e/skipped
    image: ${image}
    steps: ['true']
    if: event.type == 'schedule'
  - name: e2e/timeout
    image: ${image}
    steps:
      - 'if [ -e /src/slow ]; then echo sleeping; sleep 60; fi'
  - name: e2e/escape
    image: ${image}
    steps:
      - 'if cat ${secretFile}; then echo ESC""APED; exit 1; fi; echo read refused'
      - 'if echo hello | nc -w 2 ${listener.host} ${listener.port}; then echo ESC""APED; exit 1; fi; echo network refused'
      - 'if echo hello | nc -w 2 127.0.0.1 ${new URL(app.url).port}; then echo ESC""APED; exit 1; fi; echo loopback refused'
      - 'if echo pwned > ${probe}; then echo ESC""APED; exit 1; fi; echo write refused'
      - 'if echo pwned > /src/../${probe.slice(1)}; then echo ESC""APED; exit 1; fi; echo write refused again'
      - 'echo fds:; ls /proc/$$/fd; echo :fds'
      - 'if cat /proc/self/fd/40; then echo ESC""APED; exit 1; fi; echo inherited read refused'
      - 'if (: > /proc/self/fd/41) 2>/dev/null; then echo ESC""APED; exit 1; fi; echo inherited truncate refused'
`;
}

/** The worker's whole configuration for these tests. */
function workerEnv(schedulerUrl = app.url): Record<string, string> {
  return {
    SVC_CI_SCHEDULER_URL: schedulerUrl,
    SVC_CI_WORKER_TOKEN: WORKER_TOKEN,
    SVC_CI_INSECURE_REGISTRIES: registry.host,
    SVC_CI_CHECK_TIMEOUT: TIMEOUT,
    SVC_CI_HEARTBEAT_INTERVAL: "1s",
    SVC_CI_CACHE_DIR: path.join(scratch.dir, "cache"),
    SVC_CI_WORK_DIR: scratch.dir,
  };
}

/** The directories in the work directory that a worker marked as its own (worker/owned-directory.ts). */
async function ownedLeftovers(): Promise<string[]> {
  const names = await readdir(scratch.dir);
  return names.flatMap((name) => /^\.(.+)\.quire-owner$/.exec(name)?.[1] ?? []);
}

/**
 * Runs `worker --once` to its end and returns its output; it must exit 0. The worker holds the
 * secret file open at 40 and the inherited log at 41 without O_CLOEXEC, as a shell's `40<file`
 * would leave them: no step may see either.
 */
async function runWorkerOnce(env = workerEnv()): Promise<string> {
  const read = openSync(path.join(scratch.dir, "secret.txt"), "r");
  const write = openSync(path.join(scratch.dir, "inherited.log"), "a");
  try {
    const worker = spawnWorker(env, { inherit: { 40: read, 41: write } });
    const { code } = await worker.exited;
    expect(code, worker.output()).toBe(0);
    return worker.output();
  } finally {
    closeSync(read);
    closeSync(write);
  }
}

describe("the CI worker, end to end: real server, registry, image and sandbox", () => {
  let image = "";

  it("runs every check of a commit in the sandbox, reports each with its log, and ci_must_pass decides the merge", async () => {
    image = (await pushBusyboxImage(registry.host)).ref;
    // The listener is reachable from the host: the check's failure to reach it means something.
    await new Promise<void>((resolve, reject) =>
      connect(listener.port, listener.host, resolve).on("error", reject),
    );
    await new Promise((r) => setTimeout(r, 50));
    listener.reset();
    const secretFile = path.join(scratch.dir, "secret.txt");
    await writeFile(secretFile, SECRET);
    await writeFile(path.join(scratch.dir, "inherited.log"), "kept\n");
    await installPolicies(fx, { ci_must_pass: policies.ci_must_pass });
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(image, secretFile) }, "add CI");
    await createBranch(fx, "feature");
    const head = await commit(fx, "feature", { "notes/a.md": "# A\n", broken: "", slow: "" }, "notes");
    const id = await queuedJob(app, fx.repo, head);

    const output = await runWorkerOnce();
    expect(output).toContain("checks skipped by their if:");

    const job = await storedJob(app, id);
    expect(job).toMatchObject({ status: "failed", attempt: 1, token_hash: null });
    expect(job.error).toMatch(/^2 of 4 checks failed: /);
    expect(job.error).toContain("e2e/fail (step 2 exited 3)");
    expect(job.error).toMatch(/e2e\/timeout \(timed out after 8/);

    const runs = await checkRunsAt(app, fx.repo, "feature", head);
    expect(Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.status]))).toEqual({
      "e2e/escape": "passed",
      "e2e/fail": "failed",
      "e2e/pass": "passed",
      "e2e/timeout": "failed",
    });
    for (const [name, run] of Object.entries(runs)) {
      expect(run.reporter).toBe(`ci-job:${id}`);
      expect(run.log_url).toBe(`${app.url}/run/${id}/logs/${name}`);
    }
    const log = async (name: string) => readLog(app, fx.owner, runs[name]?.log_url ?? "");

    const pass = await log("e2e/pass");
    expect(pass).toContain("==> step 1/3: test -f /src/notes/a.md");
    expect(pass).toContain("# A\n");
    expect(pass).toContain("token file: /");
    // The job JWT was printed by the step, and scrubbed.
    expect(pass).toContain("token: ");
    expect(pass).not.toMatch(/eyJ[\w-]+\.eyJ/);
    expect(pass).toMatch(/<== step 3 exited 0/);
    // Each verdict's attestation names the image the steps ran in: the digest the log printed.
    const pulled = /^ {4}sha256:([a-f0-9]{64})/m.exec(pass)?.[1];
    expect(pulled).toBeDefined();
    const envelopes = await fx.client.get(`${fx.base}/attestations?branch=feature&at=${head}`);
    const digests = (envelopes.body as { payload: string }[]).map(
      (e) => JSON.parse(Buffer.from(e.payload, "base64").toString()).predicate.image_digest,
    );
    expect(digests).toHaveLength(4);
    for (const d of digests) expect(d).toEqual({ sha256: pulled });

    const fail = await log("e2e/fail");
    expect(fail).toContain("about to fail");
    expect(fail).toMatch(/<== step 2 exited 3/);
    expect(fail).toContain("==> step 3/3 skipped: echo fixed");
    expect(fail).not.toContain("\nfixed");

    const timeout = await log("e2e/timeout");
    expect(timeout).toContain("sleeping");
    expect(timeout).toMatch(/timed out after 8/);

    const escaping = await log("e2e/escape");
    expect(escaping).toContain("fds:\n0\n1\n2\n:fds\n");
    for (const line of [
      "inherited read refused",
      "inherited truncate refused",
      "read refused",
      "network refused",
      "loopback refused",
      "write refused",
      "write refused again",
    ])
      expect(escaping).toContain(`${line}\n`);
    expect(escaping).not.toMatch(/^ESCAPED$/m);
    expect(escaping).toMatch(/nc: can't connect .*(unreachable|refused)/i);
    expect(listener.connections).toBe(0);
    expect(escaping).not.toContain(SECRET);
    expect(await readFile(secretFile, "utf8")).toBe(SECRET);
    expect(await readFile(path.join(scratch.dir, "inherited.log"), "utf8")).toBe("kept\n");
    expect(existsSync(probe)).toBe(false);

    // The failed checks at the head block the merge...
    const blocked = await fx.client.post(`${fx.base}/merge`, { branch: "feature" });
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(403);

    // ...until a commit fixes them: every check passes and the merge goes through.
    const fixed = await commit(fx, "feature", { broken: null, slow: null }, "fix");
    const second = await queuedJob(app, fx.repo, fixed);
    await runWorkerOnce();
    expect(await storedJob(app, second)).toMatchObject({ status: "passed", error: null });
    const after = await checkRunsAt(app, fx.repo, "feature", fixed);
    expect(Object.values(after).map((r) => r.status)).toEqual(["passed", "passed", "passed", "passed"]);
    expect(await log("e2e/fail")).toContain("about to fail"); // the first job's logs stay readable
    const merged = await fx.client.post(`${fx.base}/merge`, { branch: "feature" });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
  }, 120_000);

  it("a worker killed with SIGKILL mid-step loses nothing: the reaper re-queues, the dead attempt's tokens are refused, a second worker reports afresh", async () => {
    expect(image, "the first test pushed the image").not.toBe("");
    await createBranch(fx, "feature-kill");
    const head = await commit(fx, "feature-kill", { "notes/a.md": "# K\n", nap: "" }, "nap");
    const id = await queuedJob(app, fx.repo, head);

    // The first worker goes through the relay, which notes the tokens it uses.
    app.bearers.clear();
    const first = spawnWorker(workerEnv(app.relayUrl));
    for (let i = 0; ; i++) {
      const runs = await checkRunsAt(app, fx.repo, "feature-kill", head);
      if (Object.values(runs).filter((r) => r.status === "pending").length === 4) break;
      expect(i, `checks pending; worker output:\n${first.output()}`).toBeLessThan(600);
      await new Promise((r) => setTimeout(r, 50));
    }
    // e2e/pass sleeps 5 s in its third step; its first steps take well under a second.
    await new Promise((r) => setTimeout(r, 1500));
    first.child.kill("SIGKILL");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(await storedJob(app, id)).toMatchObject({ status: "claimed", attempt: 1 });
    // It left its job's directory and its checks' copies, each marked as the worker's.
    const left = await ownedLeftovers();
    expect(left.filter((name) => name.startsWith("quire-job-"))).toHaveLength(1);
    expect(left.filter((name) => /^[A-Za-z0-9]{6}$/.test(name)).length).toBeGreaterThanOrEqual(1);
    for (const name of left) expect(existsSync(path.join(scratch.dir, name)), name).toBe(true);

    const requestToken = [...app.bearers].find((t) => /^[\w-]{43}$/.test(t));
    const jwt = [...app.bearers].find((t) => t.startsWith("eyJ"));
    expect(requestToken && jwt, "the dead worker's request token and a job JWT").toBeTruthy();
    const old = app.bearer(requestToken ?? "");
    const oldJwt = app.bearer(jwt ?? "");
    const readNotes = () => oldJwt.get(`${fx.base}/file/notes/a.md?branch=feature-kill`);
    // Still the job's live claim until the reaper runs.
    expect((await old.post(`/jobs/${id}/heartbeat`)).status).toBe(200);
    expect((await readNotes()).status).toBe(200);

    app.clock.advance(STALE_AFTER_MS + 1000);
    expect(await reapOnce(app.server.ctx)).toEqual({ requeued: [id], failed: [] });
    for (const res of [
      await old.post(`/jobs/${id}/heartbeat`),
      await old.post(`/jobs/${id}/complete`, { status: "passed" }),
      await old.post("/ci/token", { audience: "quire", check_name: "e2e/pass" }),
      await old.post(`${fx.base}/archive/presign`),
      await readNotes(),
    ])
      expect(res.status, JSON.stringify(res.body)).toBe(401);

    await runWorkerOnce();
    expect(await storedJob(app, id)).toMatchObject({ status: "passed", attempt: 2, token_hash: null });
    // The second worker removed them when it started, and its own when it was done.
    expect(await ownedLeftovers()).toEqual([]);
    for (const name of left) expect(existsSync(path.join(scratch.dir, name)), name).toBe(false);
    const runs = await checkRunsAt(app, fx.repo, "feature-kill", head);
    expect(Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.status]))).toEqual({
      "e2e/escape": "passed",
      "e2e/fail": "passed",
      "e2e/pass": "passed",
      "e2e/timeout": "passed",
    });
    const pass = await readLog(app, fx.owner, runs["e2e/pass"]?.log_url ?? "");
    expect(pass).toContain("# K\n");
    expect(pass).toMatch(/<== step 3 exited 0/);
    // The dead attempt's JWT stays refused after the new attempt completed.
    expect((await readNotes()).status).toBe(401);
  }, 120_000);
});
