import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestApp } from "../support/app.ts";
import { type RepoHandle, world } from "../support/world.ts";

const ENTRY = path.resolve(import.meta.dirname, "../../cli/bin.ts");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `quire …` as a real child process in `cwd`, talking to `app` with `token`. Without a terminal
 * unless `tty` (FORCE_TTY=1 and FORCE_COLOR=1: tables and colour as on a terminal).
 */
export function quire(
  args: string[],
  o: { cwd: string; server: string; token: string; tty?: boolean },
): Promise<Run> {
  const env: Record<string, string> = {
    PATH: process.env["PATH"] ?? "",
    HOME: o.cwd,
    XDG_CONFIG_HOME: path.join(o.cwd, ".config-unused"),
    QUIRE_SERVER: o.server,
    QUIRE_TOKEN: o.token,
    ...(o.tty ? { FORCE_TTY: "1", FORCE_COLOR: "1" } : { NO_COLOR: "1" }),
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [ENTRY, ...args],
      { cwd: o.cwd, env, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A repo with an owner, a scratch folder, and `run` for `quire` as that owner in a sub-folder. */
export async function copyWorld(app: TestApp) {
  const repo: RepoHandle = await world(app).repo();
  const dir = await mkdtemp(path.join(tmpdir(), "quire-copy-"));
  const token = await app.idp.token(repo.owner);
  const run = (args: string[], sub = "", tty = false) =>
    quire(args, { cwd: path.join(dir, sub), server: app.url, token, tty });
  const read = (rel: string) => readFile(path.join(dir, rel), "utf8");
  const write = (rel: string, text: string) => writeFile(path.join(dir, rel), text);
  const remove = (rel: string) => rm(path.join(dir, rel));
  const json = async (args: string[], sub = "") => {
    const r = await run(["--json", ...args], sub);
    if (r.code !== 0) throw new Error(`quire ${args.join(" ")} exited ${r.code}: ${r.stderr}${r.stdout}`);
    return JSON.parse(r.stdout);
  };
  return {
    repo,
    dir,
    run,
    read,
    write,
    remove,
    json,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
