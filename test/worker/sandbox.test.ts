import { type StdioOptions, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCheckRunner } from "../../worker/check/runner.ts";
import type { CheckInput, CheckResult, RunCheck } from "../../worker/check/types.ts";
import { pushBusyboxImage, startRegistry } from "../support/oci-registry.ts";

/**
 * The check runner against the real sandbox: bubblewrap over a busybox image pulled from a real
 * registry on 127.0.0.1. Every escape a hostile step might try is attempted from inside.
 */
let registry: Awaited<ReturnType<typeof startRegistry>>;
let image: string;
/** The manifest digest of `image`, which a step must not be able to read. */
let imageDigest: string;
let run: RunCheck;
let scratch: string;
let sourceDir: string;

const TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJjaGVjayJ9.job-token-signature";

beforeAll(async () => {
  registry = await startRegistry();
  ({ ref: image, digest: imageDigest } = await pushBusyboxImage(registry.host));
  scratch = await mkdtemp(path.join(tmpdir(), "quire-sandbox-test-"));
  sourceDir = path.join(scratch, "source");
  await mkdirWith(sourceDir, { "README.md": "hello from the repo\n" });
  run = createCheckRunner({ cacheDir: path.join(scratch, "cache"), insecureRegistries: [registry.host] });
});

afterAll(async () => {
  await registry?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function mkdirWith(directory: string, files: Record<string, string>): Promise<void> {
  const { mkdir } = await import("node:fs/promises");
  await mkdir(directory, { recursive: true });
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(directory, name), content);
}

function check(
  steps: string[],
  overrides: Omit<Partial<CheckInput>, "limits"> & { limits?: Partial<CheckInput["limits"]> } = {},
) {
  const { limits, ...rest } = overrides;
  return run({
    check: { name: "test", image, steps },
    sourceDir,
    jobToken: TOKEN,
    secrets: [TOKEN],
    ...rest,
    limits: { timeoutMs: 20_000, logCapBytes: 1 << 20, network: "none", ...limits },
  });
}

const text = (result: CheckResult) => result.log.toString("utf8");

describe("steps", () => {
  it("runs the steps in order on one shared /src and passes when every step exits 0", async () => {
    const result = await check(["echo built > /src/out.txt", "cat out.txt README.md", "echo to-stderr >&2"]);
    expect(result.conclusion).toBe("passed");
    expect(result.summary).toBe("3 steps passed");
    const log = text(result);
    expect(log).toMatch(
      /==> step 1\/3: echo built > \/src\/out.txt\n<== step 1 exited 0 in \d+(\.\d+)?m?s\n/,
    );
    expect(log).toContain(
      "==> step 2/3: cat out.txt README.md\nbuilt\nhello from the repo\n<== step 2 exited 0",
    );
    expect(log).toContain("to-stderr\n<== step 3 exited 0");
    // The check worked on a copy beside the source, gone now; the unpacked source is untouched.
    await expect(stat(path.join(sourceDir, "out.txt"))).rejects.toThrow();
    expect((await readdir(scratch)).filter((name) => name.startsWith("check-"))).toEqual([]);
  });

  it("shows a multi-line step in its header with the later lines indented", async () => {
    const result = await check(["echo one\necho two\n"]);
    expect(text(result)).toContain("==> step 1/1: echo one\n    echo two\none\ntwo\n<== step 1 exited 0");
  });

  it("keeps stdout and stderr in the order they were written", async () => {
    const result = await check(["echo one; echo two >&2; echo three; echo four >&2"]);
    expect(text(result)).toContain("one\ntwo\nthree\nfour\n");
  });

  it("fails the check on a non-zero exit and skips the remaining steps", async () => {
    const result = await check(["echo first", "echo failing; exit 7", "echo never-runs"]);
    expect(result.conclusion).toBe("failed");
    expect(result.summary).toBe("step 2 exited 7");
    const log = text(result);
    expect(log).toContain("failing\n<== step 2 exited 7 in");
    expect(log).toContain("==> step 3/3 skipped: echo never-runs\n");
    expect(log).not.toContain("never-runs\n<==");
  });

  it("gives the steps the job token as a file and a variable, a clean environment and HOME=/tmp", async () => {
    process.env.QUIRE_WORKER_ONLY = "must-not-leak";
    try {
      const result = await check([
        'test "$(cat "$QUIRE_JOB_TOKEN_FILE")" = "$QUIRE_JOB_TOKEN" && echo token-file-matches',
        "echo file=$QUIRE_JOB_TOKEN_FILE home=$HOME ci=$CI check=$QUIRE_CHECK leak=$(printenv QUIRE_WORKER_ONLY || echo none)",
        "echo changed > $QUIRE_JOB_TOKEN_FILE || echo token-file-read-only",
      ]);
      const log = text(result);
      expect(result.conclusion).toBe("passed");
      expect(log).toContain("token-file-matches");
      expect(log).toContain("file=/run/quire/token home=/tmp ci=true check=test leak=none");
      expect(log).toContain("token-file-read-only");
    } finally {
      delete process.env.QUIRE_WORKER_ONLY;
    }
  });

  it("fails with a clear log when the image cannot be pulled", async () => {
    const result = await check(["true"], {
      check: { name: "x", image: `${registry.host}/missing/image:1`, steps: ["true"] },
    });
    expect(result.conclusion).toBe("failed");
    expect(result.summary).toContain("could not be pulled");
    expect(text(result)).toContain("not found");
  });
  it("fails the check with the limit in its log when the image unpacks to too much", async () => {
    const runner = createCheckRunner({
      cacheDir: path.join(scratch, "cache-limited"),
      insecureRegistries: [registry.host],
      imageLimits: { maxBytes: 1 << 30, maxEntries: 10 },
    });
    const result = await runner({
      check: { name: "limited", image, steps: ["true"] },
      sourceDir,
      jobToken: TOKEN,
      secrets: [TOKEN],
      limits: { timeoutMs: 20_000, logCapBytes: 10_000, network: "none" },
    });
    expect(result.conclusion).toBe("failed");
    expect(result.summary).toBe(`image ${image} could not be pulled`);
    expect(text(result)).toMatch(
      /^quire: cannot pull the image: .*: the image has more than 10 entries \(SVC_CI_IMAGE_MAX_ENTRIES\), at "[^"]+"$/m,
    );
  });

  it("counts the pull against the check's time", async () => {
    // A registry that accepts connections and never answers.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const host = `127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    try {
      const runner = createCheckRunner({ cacheDir: path.join(scratch, "cache"), insecureRegistries: [host] });
      const result = await runner({
        check: { name: "stuck", image: `${host}/stuck:1`, steps: ["true"] },
        sourceDir,
        jobToken: TOKEN,
        secrets: [TOKEN],
        limits: { timeoutMs: 500, logCapBytes: 10_000, network: "none" },
      });
      expect(result.conclusion).toBe("failed");
      expect(result.summary).toBe("timed out after 500ms");
      expect(text(result)).toContain("==> step 1/1 skipped: true");
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe("limits", () => {
  it("kills the whole process tree when the check times out, background children included", async () => {
    const marker = String(40_000 + Math.floor(Math.random() * 9999));
    const result = await check([`sleep ${marker} & sleep ${Number(marker) + 1}`, "echo after"], {
      limits: { timeoutMs: 1500 },
    });
    expect(result.conclusion).toBe("failed");
    expect(result.summary).toBe("timed out after 1.50s");
    expect(text(result)).toContain("<== step 1 killed: the check timed out after 1.50s");
    expect(text(result)).toContain("==> step 2/2 skipped: echo after");
    // No process of the sandbox survives on the host: look for the markers in every command line.
    const survivors: string[] = [];
    for (const pid of (await readdir("/proc")).filter((p) => /^\d+$/.test(p))) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
      if (cmdline.includes(marker) || cmdline.includes(String(Number(marker) + 1))) survivors.push(cmdline);
    }
    expect(survivors).toEqual([]);
  });

  it("stops the log at its cap with one truncation line, and still reports the exit code", async () => {
    const result = await check(["yes quire-log-line | head -n 20000", "exit 3"], {
      limits: { logCapBytes: 4096 },
    });
    const log = text(result);
    expect(result.summary).toBe("step 2 exited 3");
    const [kept, after, ...more] = log.split(
      "\n[log truncated: it reached its cap of 4096 bytes; later output was dropped]\n",
    );
    expect(more).toEqual([]);
    expect(Buffer.byteLength(kept ?? "")).toBe(4096);
    expect(after).toBe("");
  });

  it("replaces every secret with *** in the log, even one printed in two writes", async () => {
    const requestToken = "request-token-0123456789abcdef";
    const result = await check(
      [
        'echo "token: $QUIRE_JOB_TOKEN"; cat "$QUIRE_JOB_TOKEN_FILE"; echo',
        "printf 'request-token-01234'; sleep 0.2; printf '56789abcdef and more\\n'",
      ],
      { secrets: [TOKEN, requestToken] },
    );
    const log = text(result);
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain("job-token-signature");
    expect(log).not.toContain(requestToken);
    expect(log).toContain("token: ***\n***\n");
    expect(log).toContain("*** and more\n");
  });
});

describe("ending early", () => {
  /** Host processes whose command line is exactly `sleep <seconds>`, as seen from the worker. */
  async function sleepers(seconds: string): Promise<string[]> {
    const found: string[] = [];
    for (const pid of (await readdir("/proc")).filter((p) => /^\d+$/.test(p))) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
      if (cmdline === `sleep\0${seconds}\0`) found.push(pid);
    }
    return found;
  }

  async function waitFor(condition: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 600 && !(await condition()); i++) await new Promise((r) => setTimeout(r, 25));
  }

  it("kills the steps when the check is cancelled", async () => {
    const marker = String(50_000 + Math.floor(Math.random() * 9999));
    const controller = new AbortController();
    const result = check([`sleep ${marker}`, "echo after"], { signal: controller.signal });
    await waitFor(async () => (await sleepers(marker)).length > 0);
    controller.abort();
    const done = await result;
    expect(done.summary).toBe("cancelled");
    expect(text(done)).toContain("==> step 2/2 skipped: echo after");
    expect(await sleepers(marker)).toEqual([]);
  });

  it("takes the sandbox down when the worker process itself is killed", async () => {
    const marker = String(60_000 + Math.floor(Math.random() * 9999));
    const runner = new URL("../../worker/check/runner.ts", import.meta.url).href;
    const script = `
      import { createCheckRunner } from ${JSON.stringify(runner)};
      const run = createCheckRunner({ cacheDir: ${JSON.stringify(path.join(scratch, "cache"))}, insecureRegistries: [${JSON.stringify(registry.host)}] });
      await run({ check: { name: "c", image: ${JSON.stringify(image)}, steps: ["sleep ${marker} & sleep ${marker}"] },
        sourceDir: ${JSON.stringify(sourceDir)}, jobToken: "t", secrets: [], limits: { timeoutMs: 60000, logCapBytes: 1000, network: "none" } });`;
    const worker = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" });
    await waitFor(async () => (await sleepers(marker)).length === 2);
    expect(await sleepers(marker)).toHaveLength(2);
    worker.kill("SIGKILL");
    await waitFor(async () => (await sleepers(marker)).length === 0);
    expect(await sleepers(marker)).toEqual([]);
  });
});

describe("isolation", () => {
  it("gives concurrent checks separate copies of /src", async () => {
    const step = (letter: string) => `echo ${letter} >> /src/mark; sleep 0.5; cat /src/mark`;
    const [a, b] = await Promise.all([check([step("alpha")]), check([step("beta")])]);
    expect(text(a as CheckResult)).toContain("alpha\n<== step 1 exited 0");
    expect(text(a as CheckResult)).not.toContain("beta");
    expect(text(b as CheckResult)).toContain("beta\n<== step 1 exited 0");
    expect(text(b as CheckResult)).not.toContain("alpha");
  });

  it("cannot read host files, write outside /src and /tmp, see host processes or leave user namespaces", async () => {
    const hostFile = path.join(scratch, "host-secret.txt");
    await writeFile(hostFile, "host-only-content\n");
    const result = await check([
      `cat ${hostFile} /etc/hostname 2>/dev/null; echo read=$?`,
      `ls ${scratch} 2>/dev/null; echo list=$?`,
      "touch /bin/planted 2>/dev/null; echo write-root=$?",
      "touch /etc/passwd 2>/dev/null; echo write-etc=$?",
      "mount -o remount,rw / 2>/dev/null; echo remount=$?",
      "touch /src/ok /tmp/ok; echo write-src-tmp=$?",
      `kill -0 ${process.pid} 2>/dev/null; echo see-worker=$?`,
      "echo processes=$(ls -d /proc/[0-9]* | wc -l)",
      "unshare -U -r true 2>&1; echo userns=$?",
      "grep Seccomp: /proc/self/status",
    ]);
    const log = text(result);
    expect(result.conclusion).toBe("passed");
    expect(log).not.toContain("host-only-content");
    expect(log).toContain("read=1");
    expect(log).toContain("list=1");
    expect(log).toContain("write-root=1");
    expect(log).toContain("write-etc=1");
    expect(log).toMatch(/remount=[1-9]/);
    expect(log).toContain("write-src-tmp=0");
    expect(log).toContain("see-worker=1");
    expect(log).toMatch(/userns=[1-9]/);
    // The filter of worker/sandbox/seccomp.ts is on: without it, `--disable-userns` alone would
    // answer ENOSPC ("No space left on device") to unshare(CLONE_NEWUSER).
    expect(log).toMatch(/^Seccomp:\t2$/m);
    expect(log).toContain("unshare(0x10000000): Operation not permitted");
    // bwrap's init, the step's shell, its subshell, `ls` and `wc`: nothing of the host.
    expect(Number(log.match(/processes=(\d+)/)?.[1])).toBeLessThanOrEqual(5);
    const trees = path.join(scratch, "cache", "r");
    for (const name of await readdir(trees)) {
      await expect(stat(path.join(trees, name, "bin", "planted"))).rejects.toThrow();
    }
  });

  it("starts every step with only stdin, stdout and stderr, whatever descriptors the worker inherited", async () => {
    // A worker process holding two host files open without O_CLOEXEC, as a shell's `40<file` or
    // a supervisor leaves them (Node marks only its low inherited descriptors close-on-exec).
    const readable = path.join(scratch, "inherited-readable.txt");
    const writable = path.join(scratch, "inherited-writable.txt");
    await writeFile(readable, "inherited-secret\n");
    await writeFile(writable, "must-stay\n");
    const runner = new URL("../../worker/check/runner.ts", import.meta.url).href;
    const script = `
      import { createCheckRunner } from ${JSON.stringify(runner)};
      const run = createCheckRunner({ cacheDir: ${JSON.stringify(path.join(scratch, "cache"))}, insecureRegistries: [${JSON.stringify(registry.host)}] });
      const result = await run({ check: { name: "fds", image: ${JSON.stringify(image)}, steps: [
          "echo fds:; ls /proc/$$/fd; echo :fds",
          "cat /proc/self/fd/40 2>/dev/null; echo read=$?",
          "(: > /proc/self/fd/41) 2>/dev/null; echo truncate=$?"] },
        sourceDir: ${JSON.stringify(sourceDir)}, jobToken: "t", secrets: [], limits: { timeoutMs: 20000, logCapBytes: 100000, network: "none" } });
      process.stdout.write(result.log);`;
    const read = openSync(readable, "r");
    const write = openSync(writable, "a");
    let log = "";
    try {
      const stdio: StdioOptions = ["ignore", "pipe", "inherit", ...Array(37).fill("ignore"), read, write];
      const worker = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        stdio,
      });
      worker.stdout?.on("data", (chunk: Buffer) => (log += chunk.toString()));
      await new Promise((resolve) => worker.on("close", resolve));
    } finally {
      closeSync(read);
      closeSync(write);
    }
    expect(log).toContain("fds:\n0\n1\n2\n:fds\n");
    expect(log).toContain("read=1");
    expect(log).toContain("truncate=1");
    expect(log).not.toContain("inherited-secret");
    expect(await readFile(writable, "utf8")).toBe("must-stay\n");
  });

  it("shows no host path of the job or the image in /proc/self/mountinfo: only neutral names", async () => {
    // As the worker lays it out: the job's source in a quire-job-* folder of the work directory.
    const work = await mkdtemp(path.join(scratch, "work-"));
    const jobDir = await mkdtemp(path.join(work, "quire-job-"));
    await mkdirWith(path.join(jobDir, "src"), { "README.md": "hello\n" });
    const cacheDir = path.join(scratch, "cache");
    const runner = createCheckRunner({ cacheDir, insecureRegistries: [registry.host], stagingDir: work });
    const result = await runner({
      check: { name: "mounts", image, steps: ["cat /proc/self/mountinfo", "cat /src/README.md"] },
      sourceDir: path.join(jobDir, "src"),
      jobToken: TOKEN,
      secrets: [TOKEN],
      limits: { timeoutMs: 20_000, logCapBytes: 1 << 20, network: "none" },
    });
    const log = text(result);
    expect(result.conclusion, log).toBe("passed");
    expect(log).toContain("hello\n<== step 2 exited 0");
    expect(log).not.toContain(jobDir);
    expect(log).not.toMatch(/quire-job-|check-/);
    // Each mount's source (the fourth field) by where it is mounted (the fifth).
    const sources = new Map(
      log
        .split("\n")
        .map((line) => line.split(" "))
        .filter((fields) => fields.length > 5 && /^\d+$/.test(fields[0] ?? ""))
        .map((fields) => [fields[4], fields[3]]),
    );
    expect(sources.get("/src")).toMatch(new RegExp(`^${work}/[A-Za-z0-9]{6}$`));
    for (const file of ["/run/quire/token", "/etc/hosts", "/etc/resolv.conf"])
      expect(sources.get(file)).toMatch(/^\/bindfile\w+\/\/deleted$/);
    // The kernel shows a bind mount's source as its path on its file system, and nothing renames
    // it: the root filesystem is kept under a random name, so the cache's layout and the image's
    // digest stay out of sight (docs/ci-worker.md).
    expect(sources.get("/")).toMatch(new RegExp(`^${cacheDir}/r/[0-9a-f]{16}$`));
    // The log's header names the image; what the step read must not.
    const mountinfo = log.slice(log.indexOf("==> step 1/2"), log.indexOf("<== step 1 "));
    expect(mountinfo).toContain(`${sources.get("/")} / ro,`);
    expect(mountinfo).not.toContain(imageDigest.slice("sha256:".length, "sha256:".length + 12));
    expect(mountinfo).not.toMatch(/sha256|\/images\/|\/rootfs/);
    const underScratch = [...sources.values()].filter((source) => source?.startsWith(scratch));
    expect(underScratch.sort()).toEqual([sources.get("/"), sources.get("/src")].sort());
  });

  it("reaches the network only when the operator turned it on", async () => {
    const connections: string[] = [];
    // The listener closes only once it has the line: busybox nc quits at the server's end of stream,
    // so closing first could race its write.
    const server = net.createServer((socket) => {
      socket.once("data", (data) => {
        connections.push(data.toString().trim());
        socket.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const step = (word: string) => `echo ${word} | nc 127.0.0.1 ${port}; echo nc=$?`;
      const off = await check([step("from-none"), "nc -w 1 10.0.0.1 80 </dev/null; echo route=$?"]);
      expect(text(off)).toMatch(/nc=[1-9]/);
      expect(text(off)).toMatch(/route=[1-9]/);
      const on = await check([step("from-on")], { limits: { network: "on" } });
      expect(text(on)).toContain("nc=0");
      expect(connections).toEqual(["from-on"]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
