import { readFile } from "node:fs/promises";
import path from "node:path";
import type { BuildOptions, Metafile, Plugin } from "esbuild";

/**
 * The esbuild settings the cloud build (scripts/build.ts) and `npm start`'s bundle
 * (scripts/build-local.ts) share, in a module of their own so that `npm start` does not load the
 * cloud build's imports (every route table) just to bundle.
 */

const ROOT = path.resolve(import.meta.dirname, "..");

/** The policy evaluator's worker thread, loaded by URL from shared/policy/evaluate.ts. */
export const POLICY_WORKER = path.join(ROOT, "shared/policy/worker.ts");

/**
 * Packages left out of the bundle and installed by Cloud Build's `npm install` instead: the ones
 * that load files of their own at run time (the Google clients' protos, pino's workers,
 * node-pg-migrate's loaders, opa-wasm) or are loaded lazily by dynamic import
 * (@kubernetes/client-node). The functions framework is the runtime's own entry.
 */
export const EXTERNAL = [
  "@google-cloud/*",
  "@grpc/*",
  "google-gax",
  "google-auth-library",
  "@kubernetes/client-node",
  "@open-policy-agent/opa-wasm",
  "node-pg-migrate",
  "pino",
];

/**
 * V8 keeps every script's source for as long as the process lives, as a two-byte string when it
 * holds one character outside Latin-1 (the web pages' tagged templates hold some). Without comments
 * and whitespace, and with every other character escaped, the source is a third smaller and one
 * byte a character. Names stay, so stack traces still name Quire's functions (docs/benchmarks.md,
 * "Where the memory goes"). Part of NODE_BUNDLE, so `npm start`'s bundle and the functions' use it.
 */
const COMPACT = { minifyWhitespace: true, minifySyntax: true, charset: "ascii" } as const;

/**
 * The outputs a process loads before it serves: every entry point and the chunks it imports
 * statically, transitively. A chunk reached only by `await import()` (esbuild makes each such
 * module an entry of its own) loads at its first use.
 */
function startOutputs(metafile: Metafile): string[] {
  const outputs = Object.entries(metafile.outputs);
  const lazy = new Set(
    outputs.flatMap(([, o]) => o.imports.filter((i) => i.kind === "dynamic-import").map((i) => i.path)),
  );
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const i of metafile.outputs[file]?.imports ?? [])
      if (i.kind === "import-statement" && !i.external) visit(i.path);
  };
  for (const [file, output] of outputs) if (output.entryPoint && !lazy.has(file)) visit(file);
  return [...seen];
}

/** A character V8 cannot keep in a one-byte (Latin-1) string. */
const WIDE = /[\u0100-\u{10ffff}]/u;

/**
 * Fails the build when an output loaded at start holds a character above U+00FF. V8 keeps each
 * script's source for the life of the process, and keeps it two bytes a character when one
 * character needs it: one `✓` in a page's template doubled `npm start`'s 1.2 MiB bundle text
 * (docs/benchmarks.md, "Where the memory goes"). `charset: "ascii"` escapes string literals, but
 * not tagged templates (their raw text is observable) or regular expressions; write those as
 * HTML character references (`&check;`) or `\u` escapes, or load the module at its first use.
 */
export async function refuseWideStartSources(metafile: Metafile): Promise<void> {
  for (const file of startOutputs(metafile)) {
    const text = await readFile(path.resolve(file), "utf8");
    const at = text.search(WIDE);
    if (at < 0) continue;
    const char = text.codePointAt(at)?.toString(16).toUpperCase().padStart(4, "0");
    throw new Error(
      `${file} holds U+${char} near ${JSON.stringify(text.slice(Math.max(0, at - 60), at + 20))}: a script loaded at start must hold Latin-1 alone (scripts/bundle-options.ts refuseWideStartSources)`,
    );
  }
}

/**
 * The process settings every deployed function runs with (terraform/functions.tf `node_env`,
 * checked by test/fast/deploy/terraform.test.ts), as `npm start` runs (docs/benchmarks.md, "Where
 * the memory goes"): V8's young generation capped at 1 MiB per semi-space, and glibc's malloc kept
 * to two arenas instead of eight per core. The bench and the bundle tests start the functions
 * with them.
 */
export const FUNCTION_ENV = { NODE_OPTIONS: "--max-semi-space-size=1", MALLOC_ARENA_MAX: "2" };

/** Each output starts with a `require` for the CommonJS packages bundled into an ES module. */
const BANNER = `import { createRequire as __quireCreateRequire } from "node:module";
const require = __quireCreateRequire(import.meta.url);`;

/**
 * What `npm start`'s bundle and the functions' bundles share: ES modules for Node 24, the
 * CommonJS banner, the compact output, and a metafile for the start-size check. Lazy imports stay
 * lazy (the KMS signer, the Kubernetes client, the web libraries): their code goes into chunks
 * beside the entry, loaded on first use, and beside it `import.meta.url` means the bundle root.
 * Each build adds its entries, folder, externals and plugins.
 */
export const NODE_BUNDLE = {
  bundle: true,
  splitting: true,
  chunkNames: "[name]-[hash]",
  platform: "node",
  format: "esm",
  target: "node24",
  banner: { js: BANNER },
  metafile: true,
  logLevel: "warning",
  ...COMPACT,
} as const satisfies BuildOptions;

/**
 * zod's namespaces (`z.locales`, `z.core.locales`) keep every language's error messages, some
 * 360 KiB: 15% of the code every function parses and runs before it listens. Quire's messages
 * are English, zod's default (classic/schemas.js imports `../locales/en.js` itself), and nothing
 * names another locale; the index of locales is bundled with English alone.
 */
export function englishZodOnly(): Plugin {
  return {
    name: "english-zod-only",
    setup(b) {
      b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
        contents: 'export { default as en } from "./en.js";\n',
        loader: "js",
      }));
    },
  };
}

/**
 * Sources find files next to themselves (`import.meta.url`, `import.meta.dirname`): the migrations,
 * the pinned opa, the policy worker. In the bundle each source sees the place it would have in a
 * copy of the repository rooted at the bundle folder, so `../../migrations` from shared/db/ is
 * `<bundle>/migrations` and the worker sits at `<bundle>/shared/policy/worker.js`.
 */
export function mirroredLocations(): Plugin {
  return {
    name: "mirrored-locations",
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = await readFile(args.path, "utf8");
        if (!source.includes("import.meta.")) return { contents: source, loader: "ts" };
        const relative = path.relative(ROOT, args.path).split(path.sep).join("/").replace(/\.ts$/, ".js");
        const dir = path.posix.dirname(relative);
        const contents = source
          .replaceAll("import.meta.url", `new URL(${JSON.stringify(`./${relative}`)}, import.meta.url).href`)
          .replaceAll("import.meta.dirname", `(import.meta.dirname + ${JSON.stringify(`/${dir}`)})`);
        return { contents, loader: "ts" };
      });
    },
  };
}
