import { closeSync, openSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pushBusyboxImage, startRegistry } from "../support/oci-registry.ts";
import { leftByKilledProcess } from "../support/stale-workspace.ts";
import { runQuire } from "./support.ts";

/**
 * `quire ci run --local`: a folder's `.svc/ci.yaml` run on this machine by the worker's own runner
 * (a real registry on 127.0.0.1, the busybox test image, bubblewrap), with no server involved.
 */

interface Row {
  check: string;
  status: string;
  summary: string;
  log: string | null;
}

const ciYaml = (image: string) => `checks:
  - name: reads-local-edit
    image: ${image}
    steps:
      - cat /src/notes.md
      - grep -q "not committed" /src/notes.md
  - name: fails
    image: ${image}
    steps:
      - echo about to fail
      - exit 3
      - echo never printed
  - name: only-on-schedule
    image: ${image}
    if: event.type == 'schedule'
    steps:
      - echo skipped
`;

describe("quire ci run --local", () => {
  let registry: Awaited<ReturnType<typeof startRegistry>>;
  let image: string;
  let home: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    registry = await startRegistry();
    image = (await pushBusyboxImage(registry.host)).ref;
    home = await mkdtemp(path.join(tmpdir(), "quire-ci-local-"));
    env = { SVC_CI_INSECURE_REGISTRIES: registry.host, SVC_CI_CACHE_DIR: path.join(home, "cache") };
  });
  afterAll(async () => {
    await registry.close();
    await rm(home, { recursive: true, force: true });
  });

  async function folder(name: string, yaml: string, files: Record<string, string>): Promise<string> {
    const dir = path.join(home, name);
    await mkdir(path.join(dir, ".svc"), { recursive: true });
    await writeFile(path.join(dir, ".svc", "ci.yaml"), yaml);
    for (const [file, text] of Object.entries(files)) await writeFile(path.join(dir, file), text);
    return dir;
  }

  it("runs each check chosen by its if: in the sandbox, keeps the logs, and exits 1 when one failed", async () => {
    const dir = await folder("mixed", ciYaml(image), { "notes.md": "edited here, not committed\n" });
    const res = await runQuire(["ci", "run", "--local", "--json"], home, { cwd: dir, env });
    expect(res.code, res.stderr).toBe(1);
    const rows = res.json<Row[]>();
    const by = new Map(rows.map((r) => [r.check, r]));
    expect(by.get("reads-local-edit")?.status).toBe("passed");
    expect(by.get("fails")?.status).toBe("failed");
    expect(by.get("only-on-schedule")?.status).toBe("skipped");
    const failLog = await readFile(by.get("fails")?.log ?? "", "utf8");
    expect(failLog).toContain("about to fail");
    expect(failLog).toContain("step 3/3 skipped");
    expect(failLog).not.toMatch(/^never printed$/m); // the step after the failing one never ran
    expect(await readFile(by.get("reads-local-edit")?.log ?? "", "utf8")).toContain("not committed");
    expect(res.stderr).toContain("some checks failed");
  });

  it("exits 0 when every check passed, and refuses a bad file or a bad flag with a clear message", async () => {
    const ok = await folder("ok", ciYaml(image).split("  - name: fails")[0] ?? "", {
      "notes.md": "not committed\n",
    });
    const passed = await runQuire(["ci", "run", "--local"], home, { cwd: ok, env });
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.stdout).toMatch(/reads-local-edit\tpassed/);

    const bad = await folder("bad", "checks: 3\n", {});
    const invalid = await runQuire(["ci", "run", "--local"], home, { cwd: bad, env });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(".svc/ci.yaml is invalid");

    const flag = await runQuire(["ci", "run", "--local", "--network", "maybe"], home, { cwd: ok, env });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--network must be none or on");

    const limit = { ...env, SVC_CI_IMAGE_MAX_ENTRIES: "many" };
    const badLimit = await runQuire(["ci", "run", "--local"], home, { cwd: ok, env: limit });
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toContain("SVC_CI_IMAGE_MAX_ENTRIES");
  });

  it("fails a check whose image unpacks past SVC_CI_IMAGE_MAX_ENTRIES, saying so in its log", async () => {
    const dir = await folder("limited", ciYaml(image).split("  - name: fails")[0] ?? "", {
      "notes.md": "not committed\n",
    });
    const limited = {
      ...env,
      SVC_CI_CACHE_DIR: path.join(home, "cache-limited"),
      SVC_CI_IMAGE_MAX_ENTRIES: "10",
    };
    const res = await runQuire(["ci", "run", "--local", "--json"], home, { cwd: dir, env: limited });
    expect(res.code, res.stderr).toBe(1);
    const [row] = res.json<Row[]>();
    expect(row?.summary).toBe(`image ${image} could not be pulled`);
    expect(await readFile(row?.log ?? "", "utf8")).toContain(
      "more than 10 entries (SVC_CI_IMAGE_MAX_ENTRIES)",
    );
  });

  it("removes the copies of the source a run killed outright left in the temporary folder", async () => {
    const temporary = await mkdtemp(path.join(home, "tmp-"));
    const stale = await leftByKilledProcess(temporary, await folder("stale-source", "", {}));
    await mkdir(path.join(temporary, "Others"));
    const dir = await folder("after-crash", ciYaml(image).split("  - name: fails")[0] ?? "", {
      "notes.md": "not committed\n",
    });
    const res = await runQuire(["ci", "run", "--local", "--json"], home, {
      cwd: dir,
      env: { ...env, TMPDIR: temporary },
    });
    expect(res.code, res.stderr).toBe(0);
    // What is left: the folder of this run's logs (not a working copy), and what was not ours.
    const left = (await readdir(temporary)).filter((name) => !name.startsWith("quire-ci-local-"));
    expect(left).toEqual(["Others"]);
    expect(stale.copy.startsWith(temporary)).toBe(true);
  });

  it("copies the folder's symbolic links as written, so relative ones work and name no host path", async () => {
    const yaml = `checks:\n  - name: links\n    image: ${image}\n    steps:\n      - "readlink /src/docs/link.md; cat /src/docs/link.md"\n`;
    const dir = await folder("links", yaml, { "notes.md": "linked notes\n" });
    await mkdir(path.join(dir, "docs"));
    await symlink("../notes.md", path.join(dir, "docs", "link.md"));
    const res = await runQuire(["ci", "run", "--local", "--json"], home, { cwd: dir, env });
    const log = await readFile(res.json<Row[]>()[0]?.log ?? "", "utf8");
    expect(res.code, log).toBe(0);
    expect(log).toContain("../notes.md\nlinked notes\n");
    expect(log).not.toContain(home);
  });

  it("starts the steps with only stdin, stdout and stderr, not the descriptors the CLI inherited", async () => {
    // A shell's `quire ci run --local 40<secret 41>>log`: descriptors without O_CLOEXEC.
    const secret = path.join(home, "inherited-secret.txt");
    const kept = path.join(home, "inherited-log.txt");
    await writeFile(secret, "inherited-secret\n");
    await writeFile(kept, "must-stay\n");
    const yaml = `checks:\n  - name: fds\n    image: ${image}\n    steps:\n      - "echo fds:; ls /proc/$$/fd; echo :fds"\n      - "cat /proc/self/fd/40; echo read=$?"\n      - "(: > /proc/self/fd/41) 2>/dev/null; echo truncate=$?"\n`;
    const dir = await folder("fds", yaml, {});
    const read = openSync(secret, "r");
    const write = openSync(kept, "a");
    try {
      const res = await runQuire(["ci", "run", "--local", "--json"], home, {
        cwd: dir,
        env,
        inherit: { 40: read, 41: write },
      });
      expect(res.code, res.stderr).toBe(0);
      const log = await readFile(res.json<Row[]>()[0]?.log ?? "", "utf8");
      expect(log).toContain("fds:\n0\n1\n2\n:fds\n");
      expect(log).toContain("read=1");
      expect(log).toContain("truncate=1");
      expect(log).not.toContain("inherited-secret");
      expect(await readFile(kept, "utf8")).toBe("must-stay\n");
    } finally {
      closeSync(read);
      closeSync(write);
    }
  });
});
