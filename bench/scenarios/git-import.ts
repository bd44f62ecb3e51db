import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { quireClient } from "../client.ts";
import { createOrg, createRepo } from "../fixtures.ts";
import { progress } from "../log.ts";
import type { Row } from "../report.ts";
import type { QuireProcess } from "../server.ts";

/*
 * `quire import-git` and `quire export-git` (issue 21 §5, docs/git.md) of a generated git history,
 * against `git fast-export | git fast-import` of the same repository in the same run: how far the
 * import (one HTTP commit per git commit, each a PostgreSQL transaction with its events and hash
 * chain) is from git copying the history in process. Run alone with
 * `npm run bench -- --only git-import` (10,000 commits) or `--only git-import --quick` (500).
 */

const FILES = 200;
const CLI = path.resolve(import.meta.dirname, "../../cli/bin.ts");
const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

/** Seconds a command took, failing the run on a non-zero exit. */
function timed(file: string, args: string[], o: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd: o.cwd, env: o.env ?? GIT_ENV, maxBuffer: 64 << 20 }, (err, _out, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(" ")}: ${stderr}`));
      else resolve((performance.now() - started) / 1000);
    });
  });
}

/**
 * A git repository of `commits` commits made with fast-import: each rewrites one of 200 small
 * files and every tenth adds a 4 KiB one, so trees grow as a documentation repo's do.
 */
async function generateHistory(dir: string, commits: number): Promise<void> {
  await timed("git", ["init", "-q", "-b", "main", dir], { cwd: tmpdir() });
  const child = spawn("git", ["fast-import", "--quiet"], {
    cwd: dir,
    env: GIT_ENV,
    stdio: ["pipe", "inherit", "inherit"],
  });
  const done = new Promise<void>((resolve, reject) =>
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`)))),
  );
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const write = (chunk: string) =>
    new Promise<void>((resolve) =>
      child.stdin.write(chunk) ? resolve() : child.stdin.once("drain", resolve),
    );
  for (let i = 1; i <= commits; i++) {
    const when = 1_700_000_000 + i * 60;
    const edits = [
      `M 100644 inline docs/page-${i % FILES}.md\n${data(`# Page ${i % FILES}\n\nRevision ${i}.\n`)}`,
    ];
    if (i % 10 === 0) edits.push(`M 100644 inline notes/${i}.md\n${data(`${"a note line\n".repeat(340)}`)}`);
    await write(
      `commit refs/heads/main\nauthor Bench <bench@example.com> ${when} +0000\ncommitter Bench <bench@example.com> ${when} +0000\n${data(`Revision ${i}\n\nEdits page ${i % FILES}.`)}${edits.join("")}\n`,
    );
  }
  child.stdin.end();
  await done;
  await timed("git", ["reset", "-q", "--hard"], { cwd: dir });
}

const s = (seconds: number) => `${seconds.toFixed(2)} s`;
const perSecond = (n: number, seconds: number) => `${(n / seconds).toFixed(0)} commits/s`;

export async function measureGitImport(server: QuireProcess, quick: boolean): Promise<Row[]> {
  const commits = quick ? 500 : 10_000;
  const q = quireClient(server.url);
  await createOrg(q);
  const repo = await createRepo(q, "git-import");
  const dir = await mkdtemp(path.join(tmpdir(), "quire-bench-git-"));
  try {
    const origin = path.join(dir, "origin");
    progress(`git-import: generating ${commits} git commits`);
    await generateHistory(origin, commits);
    const copy = path.join(dir, "copy");
    await timed("git", ["init", "-q", "--bare", copy], { cwd: dir });
    const gitCopy = await timed(
      "bash",
      ["-c", `git -C origin fast-export --all | git -C copy fast-import --quiet`],
      {
        cwd: dir,
      },
    );
    const env = { PATH: process.env["PATH"] ?? "", HOME: dir, QUIRE_SERVER: server.url, NO_COLOR: "1" };
    progress(`git-import: quire import-git of ${commits} commits`);
    const imported = await timed(process.execPath, [CLI, "import-git", origin, repo], { cwd: dir, env });
    progress(`git-import: quire export-git of ${commits} commits`);
    const exported = await timed(process.execPath, [CLI, "export-git", repo, path.join(dir, "exported")], {
      cwd: dir,
      env,
    });
    const row = (scenario: string, seconds: number, extra: Partial<Row> = {}): Row => ({
      scenario,
      result: `${s(seconds)} (${perSecond(commits, seconds)})`,
      errors: 0,
      ...extra,
    });
    return [
      row(`git fast-export | git fast-import, ${commits} commits`, gitCopy),
      row(`quire import-git (replay), ${commits} commits`, imported, {
        ratio: imported / gitCopy,
        ratioOf: "git fast-export | fast-import",
      }),
      row(`quire export-git, ${commits} commits`, exported, {
        ratio: exported / gitCopy,
        ratioOf: "git fast-export | fast-import",
      }),
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
