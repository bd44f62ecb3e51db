import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Plugin } from "esbuild";

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
 * "Where the memory goes"). `npm start`'s bundle and the functions' bundle use it.
 */
export const COMPACT = { minifyWhitespace: true, minifySyntax: true, charset: "ascii" } as const;

/**
 * The Node options every deployed function runs with (terraform/functions.tf `node_env`, checked by
 * test/fast/deploy/terraform.test.ts): V8's young generation capped at 1 MiB per semi-space, as
 * `npm start` runs (docs/benchmarks.md, "Where the memory goes"). The bench and the bundle tests
 * start the functions with it.
 */
export const FUNCTION_NODE_OPTIONS = "--max-semi-space-size=1";

/** Each output starts with a `require` for the CommonJS packages bundled into an ES module. */
export const BANNER = `import { createRequire as __quireCreateRequire } from "node:module";
const require = __quireCreateRequire(import.meta.url);`;

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
