import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Runs the commands a page of the documentation shows, so that a page cannot drift from what
 * works. A block is tagged for a test by a `test=<name>` word in its fence's info string:
 *
 *     ```sh test=ci-image/build
 *     crane append -f busybox.tar -t 127.0.0.1:5000/ci/busybox:1 --insecure
 *     ```
 *
 * Renderers take only the first word (`sh`) as the language, so readers see an ordinary block.
 * A test reads the block's exact lines with `docBlock`, maps the page's fixed addresses to the
 * test's own with `replaceAll`, and runs them with `runShell` (to its end) or `startShell` (a
 * server, until it says it is ready).
 */

/** The checkout's root: documented commands run from there, as a reader of the README would. */
export const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url));

/** The text of the one block tagged `test=<name>` in `file` (relative to the checkout). */
export function docBlock(file: string, name: string): string {
  const text = readFileSync(path.join(CHECKOUT, file), "utf8");
  const found = taggedBlocks(text).filter((block) => block.name === name);
  if (found.length !== 1) {
    throw new Error(`${file}: expected one block tagged test=${name}, found ${found.length}`);
  }
  return found[0]?.body ?? "";
}

/** Every fenced block of a Markdown text whose info string has a `test=<name>` word. */
export function taggedBlocks(markdown: string): { name: string; body: string }[] {
  const blocks: { name: string; body: string }[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i] ?? "");
    if (!open) continue;
    const [, indent = "", fence = "", info = ""] = open;
    const end = lines.findIndex((line, j) => j > i && line.trimEnd() === `${indent}${fence}`);
    if (end < 0) throw new Error(`an unclosed ${fence} block at line ${i + 1}`);
    const name = /(?:^|\s)test=(\S+)/.exec(info)?.[1];
    if (name) {
      const body = lines.slice(i + 1, end).map((line) => line.slice(indent.length));
      blocks.push({ name, body: `${body.join("\n")}\n` });
    }
    i = end;
  }
  return blocks;
}

/**
 * `script` with each key of `map` replaced by its value everywhere. Every key must occur: a page
 * that stops naming the address a test maps is a page the test no longer checks.
 */
export function replaceAll(script: string, map: Record<string, string>): string {
  let out = script;
  for (const [from, to] of Object.entries(map)) {
    if (!out.includes(from)) throw new Error(`the documented commands no longer mention ${from}:\n${script}`);
    out = out.split(from).join(to);
  }
  return out;
}

export interface ShellResult {
  code: number | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
}

export interface ShellOptions {
  /** Over this process's environment (a terminal's, as a reader has one); undefined removes. */
  env?: Record<string, string | undefined>;
  /** Default: the checkout's root. */
  cwd?: string;
}

/**
 * Runs `script` in bash as a reader would paste it into a terminal, except that the first
 * failing command stops it (`-e -o pipefail`), so a broken line fails the test where it broke.
 * Its own process group, so anything it leaves running in the background (`registry &`) is
 * stopped by `stopGroup`.
 */
export function spawnShell(script: string, opts: ShellOptions = {}): ChildProcess {
  const child = spawn("bash", ["-e", "-o", "pipefail", "-c", script], {
    cwd: opts.cwd ?? CHECKOUT,
    env: environment(opts.env ?? {}),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const stopOnExit = () => stopGroup(child, "SIGKILL");
  process.once("exit", stopOnExit);
  child.once("exit", () => process.off("exit", stopOnExit));
  return child;
}

/** Runs `script` to its end (see `spawnShell`); fails after `ms`. */
export async function runShell(
  script: string,
  opts: ShellOptions & { ms?: number } = {},
): Promise<ShellResult> {
  const child = spawnShell(script, opts);
  const output = collect(child);
  const timer = setTimeout(() => stopGroup(child, "SIGKILL"), opts.ms ?? 60_000);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  return { code, output: output() };
}

/**
 * Starts `script` (a server) and resolves once it is ready: its output contains `ready`, or the
 * probe `ready` answers true (polled every 100 ms). Rejects with all it printed if it exits first
 * or takes longer than `ms`. `stop()` ends its whole process group (`npm start` runs the server
 * three processes down) and waits for the shell to go.
 */
export async function startShell(
  script: string,
  ready: string | (() => Promise<boolean>),
  opts: ShellOptions & { ms?: number } = {},
): Promise<{ output(): string; stop(): Promise<void> }> {
  const child = spawnShell(script, opts);
  const output = collect(child);
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let exited: number | null | undefined;
  child.once("exit", (code) => (exited = code));
  const isReady = typeof ready === "string" ? async () => output().includes(ready) : ready;
  const deadline = Date.now() + (opts.ms ?? 60_000);
  while (!(await isReady())) {
    if (exited !== undefined || Date.now() > deadline) {
      stopGroup(child, "SIGKILL");
      const why = exited !== undefined ? `exited (${exited})` : "did not get ready";
      throw new Error(`${script}\n${why}:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    output,
    async stop() {
      stopGroup(child, "SIGTERM");
      const killer = setTimeout(() => stopGroup(child, "SIGKILL"), 10_000);
      await closed;
      clearTimeout(killer);
    },
  };
}

/** Signals every process of the shell's group, the shell itself perhaps gone already. */
export function stopGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the whole group has exited.
  }
}

function environment(changes: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...changes };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  return env;
}

function collect(child: ChildProcess): () => string {
  let text = "";
  child.stdout?.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return () => text;
}
