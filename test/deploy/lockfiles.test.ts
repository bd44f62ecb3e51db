import { spawn } from "node:child_process";
import { once } from "node:events";
import { copyFile, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildContainer, buildFunctions } from "../../scripts/build.ts";
import { type Lockfile, readRootLock, resolveIn } from "../../scripts/lockfile.ts";

/**
 * Every folder `npm run build` ships carries a package-lock.json cut from the root lock, so the
 * cloud's `npm ci` installs the versions the tests ran against, not the newest its ranges allow
 * (docs/build.md, "Pinned installs").
 */

let workDir: string;
/** Folder name (function target, or "container") → its directory. */
const folders = new Map<string, string>();
let root: Lockfile;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "quire-locks-"));
  for (const f of await buildFunctions(path.join(workDir, "functions"))) folders.set(f.target, f.dir);
  folders.set("container", (await buildContainer(path.join(workDir, "container"))).dir);
  root = await readRootLock();
});
afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const readJson = async <T>(file: string) => JSON.parse(await readFile(file, "utf8")) as T;

describe("the shipped lockfiles", () => {
  it("lock every package of every folder at the root lock's version, at the same place", async () => {
    for (const [name, dir] of folders) {
      const lock = await readJson<Lockfile>(path.join(dir, "package-lock.json"));
      const manifest = await readJson<{ dependencies: Record<string, string> }>(
        path.join(dir, "package.json"),
      );
      expect(lock.lockfileVersion, name).toBe(3);
      expect(lock.packages[""]?.dependencies, name).toEqual(manifest.dependencies);
      const keys = Object.keys(lock.packages).filter((k) => k !== "");
      expect(keys.length, name).toBeGreaterThan(Object.keys(manifest.dependencies).length);
      for (const key of keys) {
        const entry = lock.packages[key];
        expect(entry?.version, `${name}: ${key}`).toBe(root.packages[key]?.version);
        expect(entry?.integrity, `${name}: ${key}`).toBe(root.packages[key]?.integrity);
        expect(entry?.resolved, `${name}: ${key}`).toMatch(/^https:\/\/registry\.npmjs\.org\/.+\.tgz$/);
        expect(entry?.dev, `${name}: ${key} is no dev dependency here`).toBeUndefined();
      }
      // Each declared dependency, and each dependency of a locked package, is locked where Node
      // would find it (a missing one would be installed at whatever version npm picks).
      for (const dep of Object.keys(manifest.dependencies))
        expect(resolveIn(lock.packages, "", dep), `${name}: ${dep}`).toBeDefined();
      for (const key of keys)
        for (const dep of Object.keys(lock.packages[key]?.dependencies ?? {}))
          expect(resolveIn(lock.packages, key, dep), `${name}: ${key} needs ${dep}`).toBeDefined();
    }
  });

  it("pins the versions the tests run with, e.g. the Cloud SQL connector", async () => {
    const installed = await readJson<{ version: string }>(
      path.resolve("node_modules/@google-cloud/cloud-sql-connector/package.json"),
    );
    for (const [name, dir] of folders) {
      const lock = await readJson<Lockfile>(path.join(dir, "package-lock.json"));
      expect(lock.packages["node_modules/@google-cloud/cloud-sql-connector"]?.version, name).toBe(
        installed.version,
      );
    }
  });

  it("installs with npm ci from the cache alone, the locked versions exactly", {
    timeout: 180_000,
  }, async () => {
    for (const name of ["repos", "container"]) {
      const dir = folders.get(name) as string;
      const copy = await mkdtemp(path.join(workDir, `ci-${name}-`));
      for (const file of ["package.json", "package-lock.json"])
        await copyFile(path.join(dir, file), path.join(copy, file));
      const { NODE_OPTIONS: _loaders, ...env } = process.env;
      const child = spawn(
        "npm",
        ["ci", "--offline", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"],
        { cwd: copy, env, stdio: ["ignore", "pipe", "pipe"] },
      );
      let output = "";
      child.stdout.on("data", (c: Buffer) => (output += c));
      child.stderr.on("data", (c: Buffer) => (output += c));
      const [code] = (await once(child, "exit")) as [number | null];
      expect(code, `${name}: npm ci --offline\n${output}`).toBe(0);
      const lock = await readJson<Lockfile>(path.join(copy, "package-lock.json"));
      const installed = (await readdir(path.join(copy, "node_modules"))).length;
      expect(installed, name).toBeGreaterThan(0);
      for (const [key, entry] of Object.entries(lock.packages)) {
        if (key === "" || entry.optional) continue;
        const manifest = await readJson<{ version: string }>(path.join(copy, key, "package.json"));
        expect(manifest.version, `${name}: ${key}`).toBe(root.packages[key]?.version);
      }
    }
  });
});
