import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOwnedDirectory, removeStaleDirectories } from "../../worker/owned-directory.ts";
import { createWorkspace } from "../../worker/sandbox/workspace.ts";
import { leftByKilledProcess } from "../support/stale-workspace.ts";
import { spawnWorker } from "./support.ts";

/**
 * Each job's directory and each check's copy of the source, made in the work directory under a
 * random name with a marker naming its process beside it; those left by a process killed outright
 * are removed at the next start, and nothing else in the directory is touched.
 */
let scratch: string;
let source: string;
const HOUR = 3_600_000;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "quire-workspace-test-"));
  source = path.join(scratch, "source");
  await mkdir(source);
  await writeFile(path.join(source, "README.md"), "hello\n");
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const exists = (file: string) =>
  lstat(file).then(
    () => true,
    () => false,
  );

/** A marker as another process would write it, beside a directory holding one file. */
async function plantCopy(staging: string, name: string, owner: object): Promise<void> {
  await mkdir(path.join(staging, name));
  await writeFile(path.join(staging, name, "file"), "x");
  await writeFile(path.join(staging, `.${name}.quire-owner`), JSON.stringify(owner));
}

async function ourOwner() {
  return {
    boot: (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim(),
    pidNamespace: await readlink("/proc/self/ns/pid"),
  };
}

describe("the work directory's job folders and copies of the source", () => {
  it("removes what a process killed outright left, and nothing else", async () => {
    const staging = await mkdtemp(path.join(scratch, "work-"));
    const stale = await leftByKilledProcess(staging, source);
    expect(path.dirname(stale.copy)).toBe(staging);
    expect(path.basename(stale.copy)).toMatch(/^[A-Za-z0-9]{6}$/);
    expect(path.basename(stale.job)).toMatch(/^quire-job-[A-Za-z0-9]{6}$/);
    expect(await readFile(path.join(stale.copy, "README.md"), "utf8")).toBe("hello\n");
    const liveJob = await createOwnedDirectory(staging, "quire-job-");
    const live = await createWorkspace({
      sourceDir: source,
      stagingDir: staging,
      jobToken: "",
      network: "none",
    });
    // Not ours: no marker, or a marker whose copy is a link leading out of the directory.
    await mkdir(path.join(staging, "Abcdef"));
    await mkdir(path.join(staging, "quire-job-x1"));
    await writeFile(path.join(staging, "notes.txt"), "keep");
    const outside = path.join(scratch, "outside");
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, "precious"), "keep");
    await symlink(outside, path.join(staging, "Linked"));
    // Our own pid, with a start time it never had: the pid was reused, its maker is gone.
    const reused = { ...(await ourOwner()), pid: process.pid, start: "1", createdAt: Date.now() };
    await writeFile(path.join(staging, ".Linked.quire-owner"), JSON.stringify(reused));

    const removed = await removeStaleDirectories(staging, HOUR);

    expect(removed.sort()).toEqual([path.basename(stale.copy), path.basename(stale.job), "Linked"].sort());
    expect(await exists(stale.copy)).toBe(false);
    expect(await exists(stale.job)).toBe(false);
    expect(await readFile(path.join(outside, "precious"), "utf8")).toBe("keep");
    const liveNames = [path.basename(live.src), path.basename(liveJob.path)];
    expect((await readdir(staging)).sort()).toEqual(
      [
        ...["Abcdef", "Linked", "notes.txt", "quire-job-x1"],
        ...liveNames.flatMap((name) => [name, `.${name}.quire-owner`]),
      ].sort(),
    );
    await live.dispose();
    await liveJob.remove();
    expect((await readdir(staging)).sort()).toEqual(["Abcdef", "Linked", "notes.txt", "quire-job-x1"]);
  });

  it("judges a copy of another pid namespace or a damaged marker by its age alone", async () => {
    const staging = await mkdtemp(path.join(scratch, "work-"));
    const elsewhere = { ...(await ourOwner()), pidNamespace: "pid:[1]", pid: 1, start: "5" };
    await plantCopy(staging, "OldOne", { ...elsewhere, createdAt: Date.now() - 2 * HOUR });
    await plantCopy(staging, "NewOne", { ...elsewhere, createdAt: Date.now() });
    await mkdir(path.join(staging, "Broken"));
    await writeFile(path.join(staging, ".Broken.quire-owner"), "{");
    expect(await removeStaleDirectories(staging, HOUR)).toEqual(["OldOne"]);
    expect((await readdir(staging)).sort()).toEqual(
      ["Broken", ".Broken.quire-owner", "NewOne", ".NewOne.quire-owner"].sort(),
    );
    // The damaged marker is fresh; once older than the bound, it goes too.
    expect((await removeStaleDirectories(staging, -1)).sort()).toEqual(["Broken", "NewOne"]);
  });

  it("is removed by the worker when it starts, before it claims anything", async () => {
    const staging = await mkdtemp(path.join(scratch, "work-"));
    const stale = await leftByKilledProcess(staging, source);
    // The same marked directories in the cache's tmp/, as an image pull killed half way leaves them.
    await mkdir(path.join(scratch, "cache", "tmp"), { recursive: true });
    const cacheDebris = await leftByKilledProcess(path.join(scratch, "cache", "tmp"), source);
    // No scheduler listens there: the worker starts, cleans up, fails its one claim and exits.
    const worker = spawnWorker({
      SVC_CI_SCHEDULER_URL: "http://127.0.0.1:9",
      SVC_CI_WORKER_TOKEN: "a-static-worker-token",
      SVC_CI_WORK_DIR: staging,
      SVC_CI_CACHE_DIR: path.join(scratch, "cache"),
    });
    const { code } = await worker.exited;
    expect(code, worker.output()).toBe(1);
    expect(worker.output()).toContain("removed the directories a stopped worker left");
    expect(await readdir(staging)).toEqual([]);
    expect(await exists(stale.copy)).toBe(false);
    expect(await readdir(path.join(scratch, "cache", "tmp"))).toEqual([]);
    expect(await exists(cacheDebris.job)).toBe(false);
  });
});
