import { execFile } from "node:child_process";
import { lstat, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCli } from "../../scripts/build-cli.ts";

/**
 * How the CLI ships: `npx quire` in a checkout after `npm ci` (the package's own `bin`, run by the
 * project's Node 24, which strips the types), and `npm run install-cli` anywhere else: the bundle
 * of scripts/build-cli.ts installed globally as a copy, with no network and no dependencies to fetch.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
/** npm with the project's Node first on PATH, as `npm run` would have it. */
const nodeDir = path.dirname(process.execPath);
const env = { ...process.env, PATH: `${nodeDir}:${process.env["PATH"]}`, NO_UPDATE_NOTIFIER: "1" };
/** How README.md's "Command line" and docs/cli.md say to install the CLI. */
const INSTALL = "npm run install-cli";
let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "quire-cli-pack-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe("shipping quire", { timeout: 120_000 }, () => {
  it("`npm exec quire` runs the checkout's bin on the project's Node", async () => {
    const { stdout } = await run("npm", ["exec", "--offline", "--", "quire", "--version"], {
      cwd: ROOT,
      env,
    });
    expect(stdout.trim()).toBe(JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")).version);
    const node = await run("npm", ["exec", "--offline", "--", "node", "--version"], { cwd: ROOT, env });
    expect(node.stdout.trim()).toMatch(/^v24\./);
  });

  it("the bundle holds the CLI and only the domain code it shares on purpose", async () => {
    const { dir, inputs } = await buildCli(path.join(work, "cli"));
    // The client is typed by the server's route tables through type-only imports: no server code
    // ships. What the CLI shares on purpose is pure domain code: the hash chain (`verify`), the CI
    // configuration's parser and `if:` evaluator, the worker's check runner (`ci run --local`), and
    // the rules of paths that may be written (the working copy never writes others), and the web
    // interface's link builders (`quire open` names the pages the server serves), and the marking of
    // the folders a run makes, so the next run removes what a killed one left (`ci run --local`), and
    // the rules of secret names and sizes (the CI configuration names secrets; `secrets set`), and
    // the reading of comma lists (`issues open --labels a,b`), and the transparency log's signed
    // notes and RFC 9162 proof checks (every contact with a repo, `verify`), and the Ed25519 key's raw
    // form (`witness`), the DSSE envelopes and in-toto statements (`verify --attestations`), the
    // changed places of JSON and YAML files and the one text diff3 (`diff`, `pull`), and the size of
    // an issue list's page.
    const onPurpose =
      /^(functions\/web\/urls\.ts|shared\/commits\/hash\.ts|shared\/checks\/names\.ts|shared\/api\/path-rules\.ts|shared\/repo-secrets\/rules\.ts|shared\/api\/comma-list\.ts|shared\/transparency\/(note|verify|merkle|signer)\.ts|shared\/lazy\.ts|shared\/attestations\/(dsse|statement)\.ts|shared\/documents\/(path|changes|merge\/text)\.ts|shared\/issues\/page\.ts|shared\/ci\/config\/|worker\/(check|image|sandbox)\/|worker\/owned-directory\.ts$)/;
    const outside = inputs.filter((f) => !f.startsWith("cli/") && !f.includes("node_modules/"));
    expect(outside.filter((f) => !onPurpose.test(f))).toEqual([]);
    const manifest = JSON.parse(await readFile(path.join(dir, "package.json"), "utf8"));
    expect(manifest).toMatchObject({ bin: { quire: "quire.mjs" } });
    expect(manifest.dependencies).toBeUndefined();
  });

  it(`the documented \`${INSTALL}\` installs a working quire offline`, async () => {
    // The very command the README and docs/cli.md give, run as written; only npm's prefix is
    // moved (npm_config_prefix, as \`npm install -g --prefix\` would) so the machine is untouched.
    for (const doc of ["README.md", "docs/cli.md"])
      expect(await readFile(path.join(ROOT, doc), "utf8")).toContain(`\`${INSTALL}\``);
    const prefix = path.join(work, "prefix");
    const [command, ...args] = INSTALL.split(" ");
    await run(command!, args, {
      cwd: ROOT,
      env: { ...env, npm_config_prefix: prefix, npm_config_offline: "true" },
    });
    // A copy, not a link to dist/cli: the next build (or `rm -rf dist`) must not break it.
    expect((await lstat(path.join(prefix, "lib/node_modules/quire-cli"))).isDirectory()).toBe(true);
    const help = await run(path.join(prefix, "bin", "quire"), ["--help"], { cwd: work, env });
    expect(help.stdout).toContain("Usage: quire");
    for (const command of ["login", "repos", "branches", "events", "archive", "ci"])
      expect(help.stdout).toContain(command);
  });
});
