import { stat } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { fileUrl, proposalUrl, treeUrl } from "../../functions/web/urls.ts";
import { openBrowser } from "../auth/login.ts";
import type { CliEnv } from "../env.ts";
import { usageError } from "../errors.ts";
import { type CopyConfig, findCopyRoot, readConfig } from "../workcopy/meta.ts";

/*
 * `quire open`: the web page (docs/web.md) of what you are looking at. The page paths are the web
 * interface's own link builders (functions/web/urls.ts), so the CLI and the pages cannot disagree.
 */

interface OpenOptions {
  proposal?: string;
  repo?: string;
  branch?: string;
  print?: boolean;
}

interface Here {
  repo: string;
  branch: string;
  /** The working copy around the current folder, when there is one. */
  copy?: { root: string; config: CopyConfig };
}

/** The repo and branch: the flags, else the working copy's, else main. */
async function whereAmI(env: CliEnv, opts: OpenOptions): Promise<Here> {
  const root = await findCopyRoot(env.cwd).catch(() => undefined);
  const copy = root === undefined ? undefined : { root, config: await readConfig(root) };
  const repo = opts.repo ?? copy?.config.repo;
  if (repo === undefined)
    throw usageError(
      "which repo? not inside a working copy",
      "quire open --repo <org>/<repo>, or cd into a clone",
    );
  const sameRepo = copy !== undefined && copy.config.repo === repo;
  const branch = opts.branch ?? (sameRepo ? copy.config.branch : "main");
  return { repo, branch, ...(sameRepo ? { copy } : {}) };
}

/** The page's path: a proposal, a file or folder of the copy (or of the repo), or the tree. */
async function pagePath(env: CliEnv, target: string | undefined, opts: OpenOptions): Promise<string> {
  const here = await whereAmI(env, opts);
  if (opts.proposal !== undefined) {
    if (target !== undefined) throw usageError("give a path or --proposal, not both");
    return proposalUrl(here.repo, opts.proposal);
  }
  if (target === undefined) return treeUrl(here.repo, { branch: here.branch });
  const file = await repoPath(env.cwd, target, here);
  // The tree page lists the whole tree: a folder opens it.
  if (file === "" || (await isFolder(path.resolve(env.cwd, target))))
    return treeUrl(here.repo, { branch: here.branch });
  return fileUrl(here.repo, file, { branch: here.branch });
}

/** A path as the repo names it: relative to the copy's root inside one, else as given. */
async function repoPath(cwd: string, target: string, here: Here): Promise<string> {
  if (here.copy === undefined) return target.replace(/^\/+|\/+$/g, "");
  const relative = path.relative(here.copy.root, path.resolve(cwd, target));
  if (relative.startsWith("..") || path.isAbsolute(relative))
    throw usageError(`${target} is outside the working copy at ${here.copy.root}`);
  return relative.split(path.sep).join("/");
}

const isFolder = (p: string) =>
  stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );

/** `quire open [path] [--proposal id] [--print]`. */
export function register(program: Command, env: CliEnv): void {
  program
    .command("open")
    .description("open the web page of the working copy's branch, of a file, or of a proposal")
    .argument("[path]", "a file (or folder) of the working copy, or of --repo")
    .option("--proposal <id>", "the proposal's page")
    .option("-R, --repo <repo>", "the repo (default: the working copy's)")
    .option("-b, --branch <branch>", "the branch (default: the working copy's, else main)")
    .option("--print", "print the URL instead of opening a browser")
    .action(async (target: string | undefined, opts: OpenOptions) => {
      const url = `${await env.server()}${await pagePath(env, target, opts)}`;
      const opened = !opts.print && (await openBrowser(url, env.env));
      if (env.out.json) env.out.writeJson({ url, opened });
      else if (opened) env.out.note(`opened ${url}`);
      else env.out.line(url);
    });
}
