import { spawnSync } from "node:child_process";
import { mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { buildCli } from "./build-cli.ts";

/**
 * `npm run install-cli`: builds `dist/cli/` and installs a copy of it globally (docs/cli.md,
 * "Installing"). Two installs from one checkout at once (two terminals, or two tests) would empty
 * `dist/cli/` under each other's `npm install`, so each holds a lock folder beside it while it
 * builds and installs; a lock older than STALE_MS was left by a killed install and is taken over.
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const OUT = path.join(ROOT, "dist", "cli");
const LOCK = path.join(ROOT, "dist", ".install-cli.lock");
const STALE_MS = 5 * 60_000;

async function lock(): Promise<void> {
  await mkdir(path.dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const held = await stat(LOCK).catch(() => undefined);
      if (held && Date.now() - held.mtimeMs > STALE_MS) await rm(LOCK, { recursive: true, force: true });
      else await sleep(200);
    }
  }
}

await lock();
try {
  await buildCli(OUT);
  const npm = spawnSync(
    "npm",
    ["install", "--global", "--install-links", "--no-audit", "--no-fund", "./dist/cli"],
    { cwd: ROOT, stdio: "inherit" },
  );
  process.exitCode = npm.status ?? 1;
} finally {
  await rm(LOCK, { recursive: true, force: true });
}
