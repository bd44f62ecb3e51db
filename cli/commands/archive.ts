import { createWriteStream } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import cliProgress from "cli-progress";
import type { Command } from "commander";
import tar from "tar-stream";
import { unwritablePathProblem } from "../../shared/api/path-rules.ts";
import type { CliEnv } from "../env.ts";
import { CliError } from "../errors.ts";

/** The file name the server suggests (`Content-Disposition`), or one made from the repo. */
function fileNameOf(res: Response, repo: string): string {
  const m = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "");
  const name = m?.[1] && !m[1].includes("/") ? m[1] : `${repo.split("/").at(-1)}.tar.gz`;
  return name;
}

/** Counts bytes through a stream, for the progress bar. */
function counter(onBytes: (n: number) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      onBytes(chunk.length);
      done(null, chunk);
    },
  });
}

/**
 * Writes each file of the archive under `dir`, without the archive's top folder. Refuses any
 * entry that would land outside `dir` (the server never sends one; a proxy might), and skips,
 * telling `onSkip`, any path a working copy never writes (docs/names.md): a `.quire` segment
 * would make every `quire` command under `dir` talk to the server its copy.json names.
 */
async function extractInto(
  source: NodeJS.ReadableStream,
  dir: string,
  onSkip: (path: string, why: string) => void,
): Promise<number> {
  const root = path.resolve(dir);
  await mkdir(root, { recursive: true });
  const extract = tar.extract();
  let files = 0;
  extract.on("entry", (header, stream, next) => {
    const inside = header.name.split("/").slice(1).join("/");
    const target = path.resolve(root, inside);
    const problem = header.type === "file" ? unwritablePathProblem(inside) : null;
    if (problem) onSkip(inside, problem);
    if (header.type !== "file" || inside === "" || !target.startsWith(root + path.sep) || problem) {
      stream.resume();
      stream.on("end", next);
      return;
    }
    mkdir(path.dirname(target), { recursive: true })
      .then(() => pipeline(stream, createWriteStream(target)))
      .then(() => {
        files++;
        next();
      }, next);
  });
  await pipeline(source, createGunzip(), extract);
  return files;
}

/** `quire archive <repo>`: download the tree as a .tar.gz, or extract it. */
export function register(program: Command, env: CliEnv): void {
  program
    .command("archive <repo>")
    .description("download a branch's tree as .tar.gz (or extract it into a directory)")
    .option("-b, --branch <branch>", "the branch", "main")
    .option("--at <sequence>", "the sequence (default: the branch head)")
    .option(
      "-o, --output <file>",
      "where to write the archive (default: the server's file name; - for stdout)",
    )
    .option("-x, --extract <dir>", "extract the files into this directory instead")
    .action(
      async (repo: string, opts: { branch: string; at?: string; output?: string; extract?: string }) => {
        const out = env.out;
        const client = await env.client();
        const res = await client.download(
          "/repos/:repo*/-/archive",
          { repo },
          { branch: opts.branch, ...(opts.at !== undefined ? { at: opts.at } : {}) },
        );
        if (!res.body) throw new CliError("the server sent no archive");
        const total = Number(res.headers.get("content-length") ?? 0);
        const showProgress = out.tty && !out.json && opts.output !== "-";
        const bar = new cliProgress.SingleBar(
          {
            format: total
              ? "downloading [{bar}] {percentage}% {value}/{total} bytes"
              : "downloading {value} bytes",
            stream: process.stderr,
            // A terminal driven by FORCE_TTY (tests, CI logs) still gets the bar's lines.
            noTTYOutput: true,
            notTTYSchedule: 250,
            hideCursor: true,
            clearOnComplete: false,
          },
          cliProgress.Presets.shades_classic,
        );
        let bytes = 0;
        if (showProgress) bar.start(total || 0, 0);
        const count = counter((n) => {
          bytes += n;
          if (showProgress) bar.update(bytes);
        });
        const body = Readable.fromWeb(res.body as never);
        try {
          if (opts.extract) {
            const files = await extractInto(body.pipe(count), opts.extract, (p, why) =>
              out.note(`warning: not writing '${p}': the path ${why}`),
            );
            if (showProgress) bar.stop();
            return out.done(`extracted ${files} files into ${opts.extract}`, {
              directory: opts.extract,
              files,
              bytes,
            });
          }
          if (opts.output === "-") {
            await pipeline(body, process.stdout);
            return;
          }
          const file = opts.output ?? fileNameOf(res, repo);
          const partial = `${file}.part`;
          await pipeline(body, count, createWriteStream(partial));
          await rename(partial, file);
          if (showProgress) bar.stop();
          out.done(`wrote ${file} (${bytes} bytes)`, { file, bytes });
        } finally {
          if (showProgress) bar.stop();
        }
      },
    );
}
