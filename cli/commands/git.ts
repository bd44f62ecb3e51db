import path from "node:path";
import { Presets, SingleBar } from "cli-progress";
import { type Command, Option } from "commander";
import type { CliEnv } from "../env.ts";
import { usageError } from "../errors.ts";
import { exportGit } from "../git/export.ts";
import { DEFAULT_PART_BYTES, type ImportMode, importGit } from "../git/import.ts";
import { clientRemote, type Remote } from "../workcopy/remote.ts";

/** `--part-size`: bytes, or KiB and MiB with `K` or `M` (`512K`, `4M`), from 1 KiB. */
function partSize(value: string): number {
  const m = /^(\d{1,9})([KkMm])?(?:i?B)?$/.exec(value.trim());
  const bytes = m
    ? Number(m[1]) * (m[2] ? (m[2].toUpperCase() === "K" ? 1024 : 1024 * 1024) : 1)
    : Number.NaN;
  if (!(bytes >= 1024))
    throw usageError(`--part-size must be a size of at least 1K, like 512K or 8M; got '${value}'`);
  return bytes;
}

/** `quire import-git` and `quire export-git` (docs/git.md): a git history into Quire, and back. */
export function register(program: Command, env: CliEnv): void {
  const connect = async (): Promise<Remote> => {
    const server = await env.server();
    return clientRemote(await env.client(), () => env.token(server), env.devIdentity());
  };
  const note = (line: string) => env.out.note(line);
  /** A progress bar on stderr, on a terminal only (not with --json or --verbose, which print lines). */
  const progressBar = (verbose: boolean) => {
    if (!env.out.tty || env.out.json || verbose) return { tick: undefined, stop: () => {} };
    const bar = new SingleBar(
      {
        format: "importing {bar} {value}/{total} git commits",
        stream: process.stderr,
        clearOnComplete: true,
      },
      Presets.shades_classic,
    );
    let started = false;
    return {
      tick: (done: number, total: number) => {
        if (!started) bar.start(total, 0);
        started = true;
        bar.update(done);
      },
      stop: () => started && bar.stop(),
    };
  };

  program
    .command("import-git <path> <repo>")
    .description("import a local git repository's branch into a Quire branch (docs/git.md)")
    .option(
      "-b, --branch <branch>",
      "the Quire branch to import into (created from main when missing)",
      "main",
    )
    .addOption(
      new Option("--mode <mode>", "replay: a commit per git commit; squash: one commit of the tree")
        .choices(["replay", "squash"])
        .default("replay"),
    )
    .option("--from <rev>", "the git branch (or revision) to read", "HEAD")
    .option("--into-main", "import into a main that already has commits of its own")
    .option(
      "--part-size <size>",
      `file content per commit request before a git commit is cut into parts (default ${DEFAULT_PART_BYTES >> 20}M; cut smaller when the server answers 413)`,
    )
    .option("-v, --verbose", "a line per commit made")
    .action(
      async (
        gitDir: string,
        repo: string,
        o: {
          branch: string;
          mode: ImportMode;
          from: string;
          intoMain?: boolean;
          partSize?: string;
          verbose?: boolean;
        },
      ) => {
        const bar = progressBar(o.verbose ?? false);
        const result = await importGit(await connect(), {
          gitDir: path.resolve(env.cwd, gitDir),
          from: o.from,
          repo,
          branch: o.branch,
          mode: o.mode,
          intoMain: o.intoMain ?? false,
          ...(o.partSize === undefined ? {} : { partBytes: partSize(o.partSize) }),
          note,
          verbose: o.verbose ?? false,
          ...(bar.tick ? { progress: bar.tick } : {}),
        }).finally(bar.stop);
        const leftOut = result.left_out.length
          ? `; ${result.left_out.length} paths left out (see the warnings)`
          : "";
        env.out.done(
          `imported ${o.from} (git ${result.git_head.slice(0, 10)}) into ${repo} '${o.branch}': ${result.commits} commit${result.commits === 1 ? "" : "s"} made, head ${result.head_sequence}${leftOut}`,
          result,
        );
      },
    );

  program
    .command("export-git <repo> <path>")
    .description("write a Quire branch's history as a new git repository (docs/git.md)")
    .option("-b, --branch <branch>", "the branch to export", "main")
    .option("-v, --verbose", "a line per commit written")
    .action(async (repo: string, dir: string, o: { branch: string; verbose?: boolean }) => {
      const result = await exportGit(await connect(), {
        repo,
        branch: o.branch,
        dir: path.resolve(env.cwd, dir),
        note,
        verbose: o.verbose ?? false,
      });
      env.out.done(
        `exported ${result.commits} commits of ${repo} '${o.branch}' into ${dir}${result.git_head ? ` (git ${result.git_head.slice(0, 10)})` : ""}`,
        result,
      );
    });
}
