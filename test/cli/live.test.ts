import { readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createClient, type QuireClient } from "../../cli/client/index.ts";
import { claimResponse } from "../../shared/api/ci.ts";
import { checkRunResponse } from "../../shared/api/review.ts";
import { type CiApp, ciYaml, claimWithin, startCiApp } from "../ci/support.ts";
import { ANY_SGR, cliBin, expectExit, quireAs, runQuireOnTty, sgr, stripSgr, tempHome } from "./support.ts";

/**
 * The commands that follow something live or move bytes — `events` (resuming across a dropped
 * connection), `archive` (download and extract), `ci run` (followed to its end) — and the output
 * that depends on a terminal (tables, colour, relative times, NO_COLOR), on a real pty.
 */

const OWNER = "cli-live@example.com";
const REPO = "clilive/docs";
let app: CiApp;
let home: Awaited<ReturnType<typeof tempHome>>;
let quire: ReturnType<typeof quireAs>;
let api: QuireClient;

const b64 = (s: string) => Buffer.from(s).toString("base64");
const commit = async (branch: string, files: Record<string, string>) =>
  (
    await api.post("/repos/:repo*/-/commit", {
      params: { repo: REPO },
      body: {
        branch,
        message: "change",
        files: Object.entries(files).map(([p, c]) => ({ path: p, content: b64(c) })),
      },
    })
  ).sequence;

beforeAll(async () => {
  await cliBin();
  app = await startCiApp();
  home = await tempHome();
  quire = quireAs(app, home.dir, OWNER);
  api = createClient({ server: app.url, token: () => app.idp.token(OWNER) });
  await api.post("/orgs", { body: { name: "clilive" } });
  await api.post("/repos", { body: { owner: "clilive", name: REPO } });
  // Manual runs only: no trigger matches any branch.
  await commit("main", {
    ".svc/ci.yaml": ciYaml(["docs/lint", "docs/links"], "on:\n  push:\n    branches: [nope]\n"),
  });
});
afterAll(async () => {
  await app?.close();
  await home?.remove();
});

/**
 * A TCP proxy to the app whose connections the test can cut, as a flaky network would. `streaming`
 * turns true once the server has answered an event stream through it: the CLI's first requests
 * (the log key, the checkpoint and its proof) come before the stream opens, so bytes alone do not
 * say the stream is there.
 */
async function cuttableProxy(port: number) {
  const sockets = new Set<net.Socket>();
  let streaming = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    upstream.on("data", (d: Buffer) => {
      if (d.includes("text/event-stream")) streaming = true;
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    streaming: () => streaming,
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const waitFor = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!ok()) throw new Error(`waited 10 s for ${what}`);
};

describe("quire events", { timeout: 60_000 }, () => {
  it("follows a repo's stream, filtered by type, and resumes after a dropped connection", async () => {
    const proxy = await cuttableProxy(Number(new URL(app.url).port));
    try {
      let lines: string[] = [];
      const run = quire(
        ["events", REPO, "--type", "commit.created", "--limit", "3", "--json", "--server", proxy.url],
        {
          onStdout: (_c, all) => {
            lines = all.split("\n").filter((l) => l !== "");
          },
        },
      );
      await waitFor("the stream to open", proxy.streaming);
      const first = await commit("main", { "e1.md": "1" });
      await api.post("/repos/:repo*/-/branch", { params: { repo: REPO }, body: { name: `other-${first}` } });
      await waitFor("the first event", () => lines.length >= 1);
      proxy.cut();
      // Committed while the CLI is disconnected: only resumption (Last-Event-ID) brings them.
      const second = await commit("main", { "e2.md": "2" });
      const third = await commit("main", { "e3.md": "3" });
      const r = expectExit(await run, 0);
      const events = z
        .array(z.looseObject({ type: z.string(), data: z.looseObject({ sequence: z.number() }) }))
        .parse(lines.map((l) => JSON.parse(l)));
      expect(events.map((e) => [e.type, e.data.sequence])).toEqual([
        ["com.svc.commit.created", first],
        ["com.svc.commit.created", second],
        ["com.svc.commit.created", third],
      ]);
      expect(r.stderr).toContain("reconnecting");
    } finally {
      await proxy.close();
    }
  });

  it("--after resumes from an id (a gap notice when the log lacks it); a bad type is the server's 400", async () => {
    const live = expectExit(await quire(["events", REPO, "--after", "0.0", "--limit", "1", "--json"]), 0);
    // An id the log never reached: the gap notice, then what the log has.
    const [gap, event] = live.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(gap).toMatchObject({ notice: "gap" });
    expect(event).toMatchObject({ id: expect.any(String), type: expect.stringMatching(/^com\.svc\./) });
    const bad = expectExit(await quire(["events", REPO, "--type", "nonsense", "--limit", "1"]), 1);
    expect(bad.stderr).toContain("400");
  });
});

describe("quire archive", { timeout: 60_000 }, () => {
  it("downloads the .tar.gz under the server's name, or extracts it into a directory", async () => {
    const head = await commit("main", { "notes/a b#?.md": "odd name\n", "x.md": "x\n" });
    const dir = path.join(home.dir, "extracted");
    const x = expectExit(await quire(["archive", REPO, "--extract", dir, "--json"]), 0).json();
    expect(x).toMatchObject({ directory: dir, files: expect.any(Number) });
    expect(await readFile(path.join(dir, "notes/a b#?.md"), "utf8")).toBe("odd name\n");
    const out = path.join(home.dir, "at.tar.gz");
    expectExit(await quire(["archive", REPO, "--at", String(head), "-o", out]), 0);
    expect((await readFile(out)).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    const named = expectExit(await quire(["archive", REPO, "--json"], { cwd: home.dir }), 0).json();
    expect(named).toMatchObject({ file: `docs-${head}.tar.gz` });
  });

  it("shows a progress bar on a terminal", async () => {
    const r = expectExit(
      await runQuireOnTty(["archive", REPO, "-o", path.join(home.dir, "p.tar.gz")], home.dir, {
        env: { QUIRE_SERVER: app.url, QUIRE_TOKEN: await app.idp.token(OWNER) },
      }),
      0,
    );
    expect(r.stdout).toMatch(/downloading/);
    expect(r.stdout).toMatch(/wrote .*p\.tar\.gz/);
  });
});

/** What `quire ci run --json` prints: the run and its checks' reports. */
const ciRunOutput = z.object({
  run: z.unknown(),
  check_runs: z.array(checkRunResponse.pick({ check_name: true, status: true, log_url: true })),
});

describe("quire ci run", { timeout: 60_000 }, () => {
  it("queues a manual run and follows it to its end with each check's status and log link", async () => {
    const run = quire(["ci", "run", REPO, "--json"], { env: { QUIRE_POLL_MS: "100" } });
    const job = claimResponse.parse((await claimWithin(app)).body);
    expect(job).toMatchObject({ trigger_type: "manual", checks: ["docs/lint", "docs/links"] });
    for (const check of job.checks)
      await api.post("/repos/:repo*/-/check", {
        params: { repo: REPO },
        body: {
          branch: "main",
          check_name: check,
          status: "passed",
          sequence: job.sequence,
          log_url: `${app.url}/run/${job.id}/logs/${check}`,
        },
      });
    const done = await app.bearer(job.request_token).post(`/jobs/${job.id}/complete`, { status: "passed" });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const r = ciRunOutput.parse(expectExit(await run, 0).json());
    expect(r.run).toMatchObject({ id: job.id, status: "passed" });
    expect(r.check_runs.map((c) => [c.check_name, c.status, c.log_url]).sort()).toEqual([
      ["docs/links", "passed", `${app.url}/run/${job.id}/logs/docs/links`],
      ["docs/lint", "passed", `${app.url}/run/${job.id}/logs/docs/lint`],
    ]);
  });

  it("a failed run exits 1", async () => {
    const run = quire(["ci", "run", REPO], { env: { QUIRE_POLL_MS: "100" } });
    const job = claimResponse.parse((await claimWithin(app)).body);
    await app.bearer(job.request_token).post(`/jobs/${job.id}/complete`, { status: "failed" });
    const r = expectExit(await run, 1);
    expect(r.stderr).toContain("failed");
  });

  it("shows only this run's checks and, with no worker, says how to start one", async () => {
    // An earlier run of the same commit passed: its reports sit at this sequence too.
    const sequence = await commit("main", { "notes.md": "earlier run" });
    for (const check of ["docs/lint", "docs/links"])
      await api.post("/repos/:repo*/-/check", {
        params: { repo: REPO },
        body: { branch: "main", check_name: check, status: "passed", sequence },
      });
    app.clock.advanceSeconds(60);
    const r = expectExit(
      await quire(["ci", "run", REPO, "--wait-hint-after", "1", "--timeout", "0.05"], {
        env: { QUIRE_POLL_MS: "100" },
      }),
      1,
    );
    expect(r.stderr).not.toContain("docs/lint");
    expect(r.stderr).toContain("no CI worker has claimed run");
    expect(r.stderr).toContain("SVC_CI_WORKER_TOKEN=… npm run worker");
    expect(r.stderr).toMatch(/stopped following CI run .*: still queued/);
    expect(r.stderr).toMatch(/quire ci view clilive\/docs [0-9a-f-]{36} --watch/);
    // Nobody claimed it; end it so the next test's claim gets its own run.
    const job = claimResponse.parse((await claimWithin(app)).body);
    expect(job.sequence).toBe(sequence);
    await app.bearer(job.request_token).post(`/jobs/${job.id}/complete`, { status: "failed" });
  });

  it("inside a working copy runs the copy's repo and branch", async () => {
    expectExit(await quire(["clone", REPO, "ci-copy"]), 0);
    const copy = path.join(home.dir, "ci-copy");
    expectExit(await quire(["branch", "feature/ci"], { cwd: copy }), 0);
    const queued = expectExit(await quire(["ci", "run", "--no-follow", "--json"], { cwd: copy }), 0);
    const { run_id } = z.object({ run_id: z.string() }).parse(queued.json());
    const job = claimResponse.parse((await claimWithin(app)).body);
    expect(job).toMatchObject({ id: run_id, repo: REPO, branch: "feature/ci", trigger_type: "manual" });
    await app.bearer(job.request_token).post(`/jobs/${job.id}/complete`, { status: "passed" });
  });
});

describe("on a terminal", { timeout: 60_000 }, () => {
  const tty = async (args: string[], env: Record<string, string> = {}) =>
    runQuireOnTty(args, home.dir, {
      env: { QUIRE_SERVER: app.url, QUIRE_TOKEN: await app.idp.token(OWNER), ...env },
    });

  it("prints an aligned table with a bold header, coloured states and relative times", async () => {
    const r = expectExit(await tty(["branches", "list", REPO]), 0);
    expect(r.stdout).toContain(`${sgr(1)}NAME${sgr(22)}`);
    expect(r.stdout).toContain(`${sgr(32)}active${sgr(39)}`);
    expect(r.stdout).toMatch(/just now|seconds? ago|minutes? ago/);
    const lines = stripSgr(r.stdout).split(/\r?\n/);
    const header = lines.find((l) => l.startsWith("NAME"))!;
    const main = lines.find((l) => l.startsWith("main"))!;
    // Aligned: the second column starts at the same place in the header and the row.
    expect(main.indexOf("active")).toBe(header.indexOf("STATUS"));
  });

  it("NO_COLOR and --no-color leave the colour out, not the table", async () => {
    for (const r of [
      await tty(["branches", "list", REPO], { NO_COLOR: "1" }),
      await tty(["branches", "list", REPO, "--no-color"]),
    ]) {
      expectExit(r, 0);
      expect(r.stdout).not.toMatch(ANY_SGR);
      expect(r.stdout).toMatch(/^NAME\s+STATUS/m);
    }
  });

  it("--json on a terminal is still plain JSON", async () => {
    const r = expectExit(await tty(["repos", "view", REPO, "--json"]), 0);
    expect(JSON.parse(r.stdout.replace(/\r\n/g, "\n"))).toMatchObject({ name: REPO });
  });
});
