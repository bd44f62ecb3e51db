import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { logPath } from "../../shared/ci/jobs/logs.ts";
import { storedJob } from "../ci/scheduler/scheduler-support.ts";
import { WORKER_TOKEN } from "../ci/support.ts";
import { api } from "../support/api.ts";
import { pushBusyboxImage, startRegistry } from "../support/oci-registry.ts";
import { commit, createBranch, expectStatus, repoWithOwner, useFixture } from "../support/world.ts";
import { checkRunsAt, queuedJob, readLog, spawnWorker, startWorkerApp } from "./support.ts";

/**
 * Repo secrets reaching a real step (docs/secrets.md): the server as `npm start` runs it, a real
 * registry and image, and `worker/main.ts --once` running each step in bubblewrap. The value is
 * set over the API, reaches the step as /run/secrets/NAME (the step proves it by its hash) and
 * shows in no check log, no worker log line, no event and no read API.
 */

const app = useFixture(() => startWorkerApp());
const fx = useFixture(() => repoWithOwner(app));
const registry = useFixture(startRegistry);
const scratch = useFixture(async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "quire-secrets-"));
  return { dir, close: () => rm(dir, { recursive: true, force: true }) };
});

const VALUE = `tok-${randomBytes(16).toString("hex")}`;
const OTHER = `other-${randomBytes(16).toString("hex")}`;
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

function ciYaml(image: string): string {
  return `checks:
  - name: deploy
    image: ${image}
    secrets: [DEPLOY_TOKEN]
    steps:
      - 'sha256sum /run/secrets/DEPLOY_TOKEN'
      - 'echo "value: $(cat /run/secrets/DEPLOY_TOKEN)"; cat /run/secrets/DEPLOY_TOKEN; echo'
      - 'ls /run/secrets; if echo x > /run/secrets/DEPLOY_TOKEN; then echo WRITABLE; exit 1; fi; echo read-only'
      - 'echo fds:; ls /proc/$$/fd; echo :fds'
  - name: plain
    image: ${image}
    steps:
      - 'if [ -n "$(ls -A /run/secrets)" ]; then ls /run/secrets; exit 1; fi; echo no secrets here'
`;
}

const workerFor = () =>
  spawnWorker({
    SVC_CI_SCHEDULER_URL: app.url,
    SVC_CI_WORKER_TOKEN: WORKER_TOKEN,
    SVC_CI_INSECURE_REGISTRIES: registry.host,
    SVC_CI_CHECK_TIMEOUT: "20s",
    SVC_CI_HEARTBEAT_INTERVAL: "1s",
    SVC_CI_CACHE_DIR: path.join(scratch.dir, "cache"),
    SVC_CI_WORK_DIR: scratch.dir,
  });

/** Waits for the push job of `sequence`, runs `worker --once` to its end; its output (debug log). */
async function runJobOf(sequence: number): Promise<{ id: string; output: string }> {
  const id = await queuedJob(app, fx.repo, sequence);
  const worker = workerFor();
  const { code } = await worker.exited;
  expect(code, worker.output()).toBe(0);
  return { id, output: worker.output() };
}

describe("repo secrets in a real worker run", () => {
  it("mounts what a main push's check lists, read-only, masks it everywhere; a branch push gets none", async () => {
    const image = (await pushBusyboxImage(registry.host)).ref;
    const put = (secret: string, value: string) =>
      api(fx.client).put("/repos/:repo*/-/secrets/:secret", {
        params: { repo: fx.repo, secret },
        body: { value },
      });
    expectStatus(await put("DEPLOY_TOKEN", VALUE), 200);
    expectStatus(await put("NOT_LISTED", OTHER), 200);

    const head = await commit(fx, "main", { ".svc/ci.yaml": ciYaml(image) }, "add CI");
    const { id, output } = await runJobOf(head);
    expect(await storedJob(app, id)).toMatchObject({ status: "passed", error: null });
    const runs = await checkRunsAt(app, fx.repo, "main", head);
    expect(Object.fromEntries(Object.entries(runs).map(([n, r]) => [n, r.status]))).toEqual({
      deploy: "passed",
      plain: "passed",
    });
    const deploy = await readLog(app, fx.owner, runs["deploy"]?.log_url ?? "");
    // The step read the value: its hash is the value's. Printed, the value is masked.
    expect(deploy).toContain(`${sha256(VALUE)}  /run/secrets/DEPLOY_TOKEN`);
    expect(deploy).toContain("value: ***\n***\n");
    expect(deploy).toContain("DEPLOY_TOKEN\n");
    expect(deploy).toContain("read-only\n");
    // bwrap closed each secret's pipe once read: the step holds only 0, 1 and 2.
    expect(deploy).toContain("fds:\n0\n1\n2\n:fds\n");
    expect(deploy).not.toContain("NOT_LISTED");
    const plain = await readLog(app, fx.owner, runs["plain"]?.log_url ?? "");
    expect(plain).toContain("no secrets here\n");

    // Nowhere else either: the worker's own log, the events, the read APIs.
    expect(output).toContain("secrets fetched");
    const events = await app.sql<{ type: string; data: string }>(
      "SELECT type, data::text AS data FROM events WHERE repo = $1 ORDER BY position",
      [fx.repo],
    );
    expect(
      events.filter((e) => e.type === "com.svc.secret.accessed").map((e) => JSON.parse(e.data).name),
    ).toEqual(["DEPLOY_TOKEN"]);
    const reads = [
      await api(fx.client).get("/repos/:repo*/-/secrets", { params: { repo: fx.repo } }),
      await api(fx.client).get("/repos/:repo*/-/branch/:branch*/checks", {
        params: { repo: fx.repo, branch: "main" },
      }),
      await fx.client.get(`/run/${id}`),
    ];
    for (const text of [
      output,
      deploy,
      plain,
      JSON.stringify(events),
      JSON.stringify(reads.map((r) => r.body)),
    ]) {
      expect(text).not.toContain(VALUE);
      expect(text).not.toContain(OTHER);
    }

    // A push to another branch: the check that lists a secret runs no step and says why.
    await createBranch(fx, "feature");
    const branchHead = await commit(fx, "feature", { "notes.md": "x" }, "on a branch");
    const branchRun = await runJobOf(branchHead);
    expect((await storedJob(app, branchRun.id)).status).toBe("failed");
    const branchRuns = await checkRunsAt(app, fx.repo, "feature", branchHead);
    expect(branchRuns["deploy"]?.status).toBe("failed");
    expect(branchRuns["plain"]?.status).toBe("passed");
    const refused = await readLog(app, fx.owner, branchRuns["deploy"]?.log_url ?? "");
    expect(refused).toContain("No step ran: this run may not have the secrets it lists.");
    expect(refused).toContain("a push to 'feature' gets no secrets");
    expect(refused).not.toContain("==> step");
    expect(branchRun.output).not.toContain(VALUE);
  }, 120_000);

  it("streams a running step's output through the API before the step ends, scrubbed as the whole log is", async () => {
    const image = (await pushBusyboxImage(registry.host)).ref;
    expectStatus(
      await api(fx.client).put("/repos/:repo*/-/secrets/:secret", {
        params: { repo: fx.repo, secret: "DEPLOY_TOKEN" },
        body: { value: VALUE },
      }),
      200,
    );
    const yaml = `checks:
  - name: stream
    image: ${image}
    secrets: [DEPLOY_TOKEN]
    steps:
      - 'echo "value: $(cat /run/secrets/DEPLOY_TOKEN)"; echo "token: $QUIRE_JOB_TOKEN"; for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 1; done'
`;
    const head = await commit(fx, "main", { ".svc/ci.yaml": yaml }, "a slow check");
    const id = await queuedJob(app, fx.repo, head);
    const worker = workerFor();
    const owner = await app.idp.token(fx.owner);
    const url = `${app.url}${logPath(id, "stream")}`;
    /** The log as stored now, or null before the first upload. */
    const logSoFar = async () => {
      const redirect = await fetch(url, {
        headers: { authorization: `Bearer ${owner}` },
        redirect: "manual",
      });
      if (redirect.status === 404) return null;
      expect(redirect.status).toBe(302);
      return (await fetch(redirect.headers.get("location") ?? "")).text();
    };
    let exited = false;
    void worker.exited.then(() => {
      exited = true;
    });
    let partial: string | null = null;
    while (!partial?.includes("line 2\n")) {
      expect(exited, `the worker ended before the log streamed:\n${worker.output()}`).toBe(false);
      partial = await logSoFar();
      if (!partial?.includes("line 2\n")) await new Promise((r) => setTimeout(r, 100));
    }
    // Read while the step still runs: its check is pending, its log marked partial.
    expect((await checkRunsAt(app, fx.repo, "main", head))["stream"]?.status).toBe("pending");
    const [row] = await app.sql<{ final: boolean }>(
      "SELECT final FROM ci_logs WHERE job_id = $1 AND check_name = 'stream'",
      [id],
    );
    expect(row?.final).toBe(false);
    expect(partial).not.toContain("line 8");
    // Scrubbed as the whole log is: the secret and the job token are masked.
    expect(partial).toContain("value: ***\ntoken: ***\nline 1\n");
    expect(partial).not.toContain(VALUE);

    const { code } = await worker.exited;
    expect(code, worker.output()).toBe(0);
    expect(worker.output()).toContain("log so far uploaded");
    const runs = await checkRunsAt(app, fx.repo, "main", head);
    expect(runs["stream"]?.status).toBe("passed");
    const whole = await readLog(app, fx.owner, runs["stream"]?.log_url ?? "");
    expect(whole.startsWith(partial)).toBe(true);
    expect(whole).toContain("line 8\n<== step 1 exited 0");
    expect(whole).not.toContain(VALUE);
  }, 60_000);
});
