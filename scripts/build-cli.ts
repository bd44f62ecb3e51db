import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

/**
 * The `quire` CLI as one file: `dist/cli/quire.mjs` (every dependency bundled by esbuild, so the
 * package needs no install step of its own) and a `package.json` whose `bin` names it. `npm run
 * install-cli` installs a copy of it globally; `npm pack ./dist/cli` makes a tarball
 * (docs/cli.md, "Installing").
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const ENTRY = path.join(ROOT, "cli/bin.ts");

/** The CommonJS packages (commander, cli-table3…) need `require` inside an ES module. */
const BANNER = `import { createRequire as __quireCreateRequire } from "node:module";
const require = __quireCreateRequire(import.meta.url);`;

/** Builds into `outDir` (emptied first); `inputs` are the source files the bundle holds. */
export async function buildCli(outDir: string): Promise<{ bin: string; dir: string; inputs: string[] }> {
  const dir = path.resolve(outDir);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const bin = path.join(dir, "quire.mjs");
  const { metafile } = await build({
    metafile: true,
    entryPoints: [ENTRY],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    outfile: bin,
    banner: { js: BANNER },
    legalComments: "none",
    logLevel: "warning",
  });
  await chmod(bin, 0o755);
  const root = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as { version: string };
  const manifest = {
    name: "quire-cli",
    version: root.version,
    description: "The quire command line: a client of a Quire server",
    type: "module",
    bin: { quire: "quire.mjs" },
    files: ["quire.mjs"],
    engines: { node: ">=24" },
    license: "UNLICENSED",
  };
  await writeFile(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return { bin, dir, inputs: Object.keys(metafile.inputs) };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: "string", default: "dist/cli" } } });
  const { dir } = await buildCli(values.out);
  process.stdout.write(`cli\t${path.relative(process.cwd(), dir)}\n`);
}
