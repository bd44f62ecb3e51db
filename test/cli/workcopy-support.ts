import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestApp } from "../support/app.ts";
import { type RepoHandle, world } from "../support/world.ts";
import { runQuire, runQuireOnTty } from "./support.ts";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `quire …` as a real child process in `cwd` (the shared helpers of test/cli/support.ts: the
 * bundled CLI, and for `tty` a real pseudo-terminal, where stderr arrives mixed into stdout and
 * is given as both), talking to `app` with `token`. Without a terminal, NO_COLOR is set.
 */
export async function quire(
  args: string[],
  o: {
    cwd: string;
    home: string;
    server: string;
    token: string;
    tty?: boolean;
    env?: Record<string, string>;
  },
): Promise<Run> {
  const env = {
    QUIRE_SERVER: o.server,
    QUIRE_TOKEN: o.token,
    ...(o.tty ? {} : { NO_COLOR: "1" }),
    ...o.env,
  };
  if (o.tty) {
    const r = await runQuireOnTty(args, o.home, { cwd: o.cwd, env });
    const text = r.stdout.replace(/\r\n/g, "\n");
    return { code: r.code, stdout: text, stderr: text };
  }
  const r = await runQuire(args, o.home, { cwd: o.cwd, env });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

/** A repo with an owner, a scratch folder, and `run` for `quire` as that owner in a sub-folder. */
export async function copyWorld(app: TestApp) {
  const repo: RepoHandle = await world(app).repo();
  const dir = await mkdtemp(path.join(tmpdir(), "quire-copy-"));
  const token = await app.idp.token(repo.owner);
  const run = (args: string[], sub = "", tty = false, env: Record<string, string> = {}) =>
    quire(args, { cwd: path.join(dir, sub), home: dir, server: app.url, token, tty, env });
  const read = (rel: string) => readFile(path.join(dir, rel), "utf8");
  const write = (rel: string, text: string) => writeFile(path.join(dir, rel), text);
  const remove = (rel: string) => rm(path.join(dir, rel));
  const json = async (args: string[], sub = "") => {
    const r = await run(["--json", ...args], sub);
    if (r.code !== 0) throw new Error(`quire ${args.join(" ")} exited ${r.code}: ${r.stderr}${r.stdout}`);
    const parsed: unknown = JSON.parse(r.stdout);
    return parsed;
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
