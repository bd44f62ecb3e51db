import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, inject } from "vitest";
import { startTestApp, type TestApp } from "../support/app.ts";
import { stdioWith } from "../support/child.ts";

/**
 * The shipped CLI: the bundle `npm run build` makes (scripts/build-cli.ts), built once per run by
 * the global setup (test/support/global-setup.ts) and only read by the files. It is what users
 * install, and it starts in a third of the time of the sources, which matters when a file runs
 * dozens of commands.
 */
export async function cliBin(): Promise<string> {
  const cli = inject("cliBundle");
  if ("error" in cli) throw new Error(`the CLI did not bundle: ${cli.error}`);
  return cli.bin;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = unknown>(): T;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Called with each chunk of stderr as it comes (a login's URL, progress). */
  onStderr?(text: string, all: string): void;
  onStdout?(text: string, all: string): void;
  signal?: AbortSignal;
  /** Open descriptors the CLI inherits, by their number in the CLI (above 2): `{40: fd}`. */
  inherit?: Record<number, number>;
}

/** The environment of a CLI run: nothing of the developer's own (no HOME config, no colour). */
function baseEnv(home: string): Record<string, string> {
  return {
    PATH: process.env["PATH"] ?? "",
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    LANG: "C.UTF-8",
  };
}

/** Runs `quire <args>` as a child process without a terminal. */
export async function runQuire(args: string[], home: string, o: RunOptions = {}): Promise<CliResult> {
  const env = Object.fromEntries(
    Object.entries({ ...baseEnv(home), ...o.env }).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const bin = await cliBin();
  return collect(
    spawn(process.execPath, [bin, ...args], { env, cwd: o.cwd ?? home, stdio: stdioWith(o.inherit) }),
    o,
  );
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `quire <args>` on a real pseudo-terminal, through util-linux's `script`: stdout and stderr
 * both arrive on the terminal, so they come back together in `stdout` (with \r\n line ends).
 */
export async function runQuireOnTty(args: string[], home: string, o: RunOptions = {}): Promise<CliResult> {
  const env = Object.fromEntries(
    Object.entries({ ...baseEnv(home), TERM: "xterm-256color", COLUMNS: "160", ...o.env }).filter(
      (e): e is [string, string] => e[1] !== undefined,
    ),
  );
  const command = [process.execPath, await cliBin(), ...args].map(shellQuote).join(" ");
  return collect(
    spawn("script", ["-qec", `stty cols 160 2>/dev/null; ${command}`, "/dev/null"], {
      env,
      cwd: o.cwd ?? home,
      stdio: ["ignore", "pipe", "pipe"],
    }),
    o,
  );
}

function collect(child: ReturnType<typeof spawn>, o: RunOptions): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
    o.onStdout?.(d.toString(), stdout);
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
    o.onStderr?.(d.toString(), stderr);
  });
  o.signal?.addEventListener("abort", () => child.kill("SIGINT"));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        json: () => {
          try {
            return JSON.parse(stdout);
          } catch {
            throw new Error(`not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
          }
        },
      }),
    );
  });
}

/** A fresh HOME for CLI runs (its config dir holds the stored sign-ins). */
export async function tempHome(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), "quire-cli-home-"));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A CLI bound to a test app and an identity: each call runs `quire` against the app with a fresh
 * ID token for `email` in QUIRE_TOKEN (the scripts' way), without a terminal.
 */
export function quireAs(app: TestApp, home: string, email: string) {
  return async (args: string[], o: RunOptions = {}) =>
    runQuire(args, home, {
      ...o,
      env: { QUIRE_SERVER: app.url, QUIRE_TOKEN: await app.idp.token(email), ...o.env },
    });
}

/**
 * For a test file: the CLI bundle, a test app, a fresh HOME and `email` owning `repo` (`org/name`,
 * made through the CLI itself), all ready in `beforeAll` and gone after the file. `quire` runs the
 * CLI as that owner.
 */
export function useCliRepo(email: string, repo: string) {
  const setup = {} as { app: TestApp; home: Awaited<ReturnType<typeof tempHome>> };
  let owner: ReturnType<typeof quireAs> | undefined;
  beforeAll(async () => {
    await cliBin();
    setup.app = await startTestApp();
    setup.home = await tempHome();
    owner = quireAs(setup.app, setup.home.dir, email);
    expectExit(await owner(["orgs", "create", repo.split("/")[0] ?? repo]), 0);
    expectExit(await owner(["repos", "create", repo]), 0);
  });
  afterAll(async () => {
    await setup.app?.close();
    await setup.home?.remove();
  });
  const quire = (args: string[], o?: RunOptions) => {
    if (owner === undefined) throw new Error("useCliRepo: quire called before beforeAll ran");
    return owner(args, o);
  };
  return { quire, app: () => setup.app, homeDir: () => setup.home.dir };
}

/** Fails with the run's output when it did not exit with `code`. */
export function expectExit(r: CliResult, code: number): CliResult {
  if (r.code !== code)
    throw new Error(`expected exit ${code}, got ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  return r;
}

const ESC = String.fromCharCode(27);
/** An SGR escape sequence (`sgr(1)`: bold on). */
export const sgr = (code: number) => `${ESC}[${code}m`;
/** Matches an SGR sequence: colour and weight. */
export const ANY_SGR = new RegExp(`${ESC}\\[[0-9;]*m`);
/** The text without its SGR sequences. */
export const stripSgr = (text: string) => text.replace(new RegExp(ANY_SGR.source, "g"), "");
