import { existsSync } from "node:fs";
import { lstat, mkdir, mkdtemp, readdir, realpath, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildForStart, type StartBuild } from "../../scripts/build-local.ts";

/*
 * `npm start`'s build (scripts/build-local.ts): each build in a folder named by its content, and
 * the start link swapped to it, so a second `npm start` in the same checkout never removes the
 * folder a running server loads its lazy chunks from.
 */

let dir: string;
let at: StartBuild;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "quire-start-build-"));
  at = { builds: path.join(dir, "builds"), link: path.join(dir, "local") };
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A folder standing for an earlier build, last changed `hoursAgo`. */
async function plantBuild(name: string, hoursAgo: number): Promise<string> {
  const folder = path.join(at.builds, name);
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, "main.js"), `// ${name}\n`);
  const when = new Date(Date.now() - hoursAgo * 3_600_000);
  await utimes(folder, when, when);
  return folder;
}

describe("npm start's build", () => {
  it("lets two builds run at once: both succeed and the link names their one shared folder", async () => {
    const mains = await Promise.all([buildForStart(at), buildForStart(at)]);
    expect(mains).toEqual([path.join(at.link, "main.js"), path.join(at.link, "main.js")]);
    expect((await lstat(at.link)).isSymbolicLink()).toBe(true);
    const target = await realpath(at.link);
    expect(path.dirname(target)).toBe(await realpath(at.builds));
    expect(path.basename(target)).toMatch(/^[0-9a-f]{16}$/);
    expect(existsSync(path.join(target, "main.js"))).toBe(true);
    expect(existsSync(path.join(target, "migrations"))).toBe(true);
    // One folder, and no half-built one left behind.
    expect(await readdir(at.builds)).toEqual([path.basename(target)]);
  });

  it("keeps the newest builds a running server may use, and replaces a folder of the old layout", async () => {
    // Before builds were linked, the start path was a folder of its own.
    await mkdir(at.link, { recursive: true });
    await writeFile(path.join(at.link, "main.js"), "// the old layout\n");
    for (const [i, hours] of [5, 4, 3, 2, 1].entries()) await plantBuild(`old${i}`, hours);
    await plantBuild(".building-abandoned", 2);
    await plantBuild(".building-in-progress", 0);

    await buildForStart(at);

    expect((await lstat(at.link)).isSymbolicLink()).toBe(true);
    const current = path.basename(await realpath(at.link));
    expect((await readdir(at.builds)).sort()).toEqual(
      [".building-in-progress", "old2", "old3", "old4", current].sort(),
    );
  });
});
