import path from "node:path";
import { Presets, SingleBar } from "cli-progress";
import { type Command, InvalidArgumentError, Option } from "commander";
import { configDir } from "../auth/store.ts";
import type { CliEnv } from "../env.ts";
import { CliError } from "../errors.ts";
import type { Output } from "../output.ts";
import { attestationLines, verifyAttestations } from "../transparency/attestations.ts";
import type { Audit } from "../transparency/audit.ts";
import { fetchLogGet, requiredWitnesses } from "../transparency/contact.ts";
import { verificationJson, verificationLines } from "../transparency/report.ts";
import { CheckpointStore } from "../transparency/store.ts";
import { verifyLog } from "../transparency/verify.ts";
import { clone, createBranch, openCopy, switchBranch } from "../workcopy/copy.ts";
import { log, show, verify } from "../workcopy/history.ts";
import { CopyError } from "../workcopy/meta.ts";
import { switchMerging } from "../workcopy/pull.ts";
import { clientRemote, type Remote } from "../workcopy/remote.ts";
import {
  colourPatch,
  conflictTable,
  policyTable,
  type Style,
  statusLines,
  structureTable,
} from "../workcopy/render.ts";
import { branchDiff, localDiff, merge, patchOf, rebase, resolve } from "../workcopy/review.ts";
import { movedLine, registerSync, resolvePulled, showMerge } from "./workcopy-sync.ts";

/*
 * The working copy's git-like verbs (docs/cli.md, "Working copy"): clone, status, commit, pull,
 * switch, branch, diff, log, show, merge, rebase, verify, resolve. The logic lives in
 * cli/workcopy/; this module parses arguments and renders results (tables and colour on a
 * terminal, --json for scripts).
 */

interface VerifyOptions {
  sequence?: number[];
  chain?: boolean;
  attestations?: boolean;
  witness?: string[];
}

const sequenceArg = (v: string) => {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError("must be a sequence number (0 or more)");
  return Number(v);
};

/** Library errors become CLI errors carrying the same message and what to do next. */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof CopyError) throw new CliError(e.message, e.hint ? { hint: e.hint } : {});
    throw e;
  }
}

export function register(program: Command, env: CliEnv): void {
  const out = (): Output => env.out;
  const style = (): Style => ({ color: env.out.c.isColorSupported });
  /** The server is --server, QUIRE_SERVER, or else the working copy's own (CliEnv.server). */
  const connect = async (): Promise<Remote> => {
    const server = await env.server();
    return clientRemote(await env.client(), () => env.token(server), env.devIdentity());
  };
  /** A progress bar on stderr for downloads of many files, on a terminal only (not with --json). */
  const progress = () => {
    if (!env.out.tty || env.out.json) return undefined;
    const bar = new SingleBar(
      {
        format: "fetching {bar} {value}/{total} files",
        stream: process.stderr,
        hideCursor: true,
        clearOnComplete: true,
      },
      Presets.shades_classic,
    );
    let state: "idle" | "running" | "done" = "idle";
    return {
      tick: (done: number, total: number) => {
        if (state === "idle" && total >= 200) {
          bar.start(total, 0);
          state = "running";
        }
        if (state !== "running") return;
        bar.update(done);
        if (done >= total) {
          bar.stop();
          state = "done";
        }
      },
    };
  };
  /** A path of the repo the copy leaves out (cli/workcopy/sync.ts treeMap): a warning line. */
  const onSkip = (p: string, why: string) => out().note(`warning: not writing '${p}': the path ${why}`);
  const here = async () => {
    const copy = await openCopy(env.cwd);
    copy.onSkip = onSkip;
    const bar = progress();
    if (bar) copy.onProgress = bar.tick;
    return { copy, remote: await connect() };
  };
  const action =
    <A extends unknown[]>(fn: (...args: A) => Promise<void>) =>
    (...args: A) =>
      guarded(() => fn(...args));

  program
    .command("clone")
    .description("Clone a repo's branch into a new working copy (one archive download)")
    .argument("<repo>", "the repo, as org/name")
    .argument("[dir]", "the folder to create (default: the repo's last segment)")
    .option("-b, --branch <branch>", "the branch to follow", "main")
    .option("--at <sequence>", "clone the tree at this sequence instead of the branch head", sequenceArg)
    .action(
      action(async (repo: string, dir: string | undefined, o: { branch: string; at?: number }) => {
        const remote = await connect();
        const bar = progress();
        const r = await clone(remote, {
          ...(bar ? { onProgress: bar.tick } : {}),
          onSkip,
          repo,
          dir: path.resolve(env.cwd, dir ?? repo.split("/").pop() ?? repo),
          branch: o.branch,
          ...(o.at === undefined ? {} : { at: o.at }),
        });
        out().done(`cloned ${r.repo} '${r.branch}' at ${r.sequence} into ${r.root} (${r.files} files)`, r);
      }),
    );

  registerSync(program, env, { here, action, style });

  program
    .command("switch")
    .description("Switch the copy to another branch's head")
    .argument("<branch>", "the branch")
    .option("--merge", "carry local changes along, merged with the branch's files as `pull` merges")
    .action(
      action(async (branch: string, o: { merge?: boolean }) => {
        const { copy, remote } = await here();
        if (o.merge) return showMerge(out(), await switchMerging(copy, remote, branch), "switched to");
        const r = await switchBranch(copy, remote, branch);
        out().done(movedLine(r, "switched to"), r);
      }),
    );

  program
    .command("branch")
    .description("Create a branch from main's head and switch to it; without a name, list branches")
    .argument("[name]", "the new branch")
    .action(
      action(async (name: string | undefined) => {
        const { copy, remote } = await here();
        if (name === undefined) {
          const list = await remote.branches(copy.config.repo, { include_draft: "true" });
          const rows = [
            await remote.branch(copy.config.repo, "main"),
            ...list.filter((b) => b.name !== "main"),
          ];
          return out().table(
            rows.map((b) => ({ ...b, current: b.name === copy.config.branch ? "*" : "" })),
            [
              { header: "", value: (b) => b.current },
              { header: "branch", value: (b) => b.name },
              { header: "head", value: (b) => b.head_sequence },
              { header: "base", value: (b) => b.base_sequence },
              { header: "status", value: (b) => (b.draft ? "draft" : b.status), kind: "state" },
            ],
          );
        }
        const r = await createBranch(copy, remote, name);
        out().done(`created '${name}' from main at ${r.sequence} and switched to it`, r);
      }),
    );

  program
    .command("diff")
    .description("Local changes as a unified diff, or a branch's changes against main")
    .argument("[paths...]", "only these files or folders (local diff)")
    .addOption(new Option("--branch [name]", "diff a branch against main (default: the copy's branch)"))
    .action(
      action(async (paths: string[], o: { branch?: string | true }) => {
        const { copy, remote } = await here();
        if (o.branch !== undefined) {
          const name = o.branch === true ? copy.config.branch : o.branch;
          const d = await branchDiff(copy.config.repo, remote, name);
          if (out().json) return out().writeJson(d);
          for (const c of d.changes) {
            out().line(colourPatch(c.patch || `${c.status} ${c.path}\n`, style()).trimEnd());
            if (c.structure) out().line(structureTable(c.path, c.structure, style()));
          }
          if (d.conflicts.length > 0) {
            out().line(`conflicts with main (${d.conflicts.length}):`);
            out().line(conflictTable(d.conflicts, style()));
          }
          return;
        }
        const entries = await localDiff(copy, remote, paths);
        if (out().json) return out().writeJson(entries);
        if (entries.length === 0) return out().note("no local changes");
        for (const e of entries) {
          out().line(colourPatch(e.patch, style()).trimEnd());
          if (e.structure) out().line(structureTable(e.path, e.structure, style()));
        }
      }),
    );

  program
    .command("log")
    .description("The commits of the copy's branch up to its sequence, newest first")
    .option("-n, --limit <n>", "how many", sequenceArg, 20)
    .action(
      action(async (o: { limit: number }) => {
        const { copy, remote } = await here();
        const entries = await log(copy.config, remote, o.limit);
        // One line per commit, as `git log --oneline` with a time and an author.
        out().table(
          entries,
          [
            { header: "seq", value: (e) => e.sequence },
            { header: "hash", value: (e) => e.hash.slice(0, 7) },
            { header: "when", value: (e) => e.created_at, kind: "time" },
            { header: "author", value: (e) => e.author },
            { header: "subject", value: (e) => e.message.split("\n")[0] },
          ],
          "no commits",
          { header: false },
        );
      }),
    );

  program
    .command("show")
    .description("One commit: its author, message and files (with --patch, their diffs)")
    .argument("<sequence>", "the commit's sequence", sequenceArg)
    .option("-p, --patch", "show each file's diff")
    .action(
      action(async (seq: number, o: { patch?: boolean }) => {
        const { copy, remote } = await here();
        const r = await show(copy.config.repo, remote, seq, { patch: o.patch === true, patchOf });
        if (out().json) return out().writeJson(r);
        const c = out().c;
        out().line(`${c.yellow(`commit ${r.sequence}`)} on '${r.branch}'`);
        out().line(`Author: ${r.author}`);
        out().line(`Date:   ${r.created_at}`);
        out().line("");
        for (const l of r.message.split("\n")) out().line(`    ${l}`);
        out().line("");
        for (const f of r.files) {
          out().line(statusLines([{ path: f.path, status: f.status }], style())[0] ?? "");
          if (f.patch) out().line(colourPatch(f.patch, style()).trimEnd());
        }
      }),
    );

  program
    .command("merge")
    .description(
      "Merge the copy's branch into main; prints each policy's result and each conflict when refused",
    )
    .option("--dry-run", "only say what a merge would answer now")
    .action(
      action(async (o: { dryRun?: boolean }) => {
        const { copy, remote } = await here();
        const r = await merge(copy, remote, o.dryRun === true);
        if (out().json) out().writeJson(r);
        if (r.outcome === "merged") {
          if (!out().json)
            out().done(
              o.dryRun
                ? `'${r.result.branch}' would merge now (main would be at ${r.result.sequence})`
                : `merged '${r.result.branch}' into main at ${r.result.sequence}; \`quire switch main\` to follow it`,
            );
          return;
        }
        if (!out().json) {
          out().line(r.message);
          out().line(
            r.outcome === "denied" ? policyTable(r.policies, style()) : conflictTable(r.conflicts, style()),
          );
        }
        // With --json the result above is stdout's one document; the error goes to stderr.
        const why = r.outcome === "denied" ? "the merge policies deny it" : "the branch conflicts with main";
        throw new CliError(
          o.dryRun
            ? `a merge now would be refused: ${why} (dry run: nothing changed)`
            : r.outcome === "denied"
              ? "the merge policies refused the merge"
              : "the branch conflicts with main",
          {
            hint:
              r.outcome === "denied"
                ? "meet the failing policies (reviews, checks), then merge again"
                : "take a side per path with `quire resolve <path> --take main|branch`, or `quire rebase` after fixing them",
          },
        );
      }),
    );

  program
    .command("rebase")
    .description("Replay the copy's branch onto main's head and bring the copy there")
    .action(
      action(async () => {
        const { copy, remote } = await here();
        const r = await rebase(copy, remote);
        if (out().json) out().writeJson(r);
        if (r.outcome === "conflict") {
          if (!out().json) {
            out().line(r.message);
            out().line(conflictTable(r.conflicts, style()));
          }
          throw new CliError("the rebase conflicts with main; nothing changed", {
            hint: "take a side per path: quire resolve <path> --take main|branch",
          });
        }
        if (!out().json)
          out().done(
            `rebased '${copy.config.branch}' onto main at ${r.base_sequence}: head ${r.head_sequence}, ${r.commits_replayed} commit(s) replayed`,
          );
        if (r.pullError)
          throw new CliError(`the copy stayed at its old sequence: ${r.pullError}`, {
            hint: "commit or undo those changes, then `quire pull`",
          });
      }),
    );

  program
    .command("verify")
    .description(
      "Check the repo's signed history with proofs: the checkpoint's signature, that it extends the one seen before, and that each branch head is in it",
    )
    .argument("[repo]", "a repo (default: the working copy's)")
    .option("--sequence <n...>", "also prove these commits", (v: string, acc: number[] = []) => [
      ...acc,
      sequenceArg(v),
    ])
    .option("--chain", "download the whole hash chain and recompute every hash instead")
    .option(
      "--attestations",
      "also check the check runs' signed attestations of main and every active branch against the key and the log",
    )
    .option(
      "--witness <vkey...>",
      "refuse a checkpoint without a valid cosignature by this witness key (also: QUIRE_REQUIRE_WITNESS)",
    )
    .action(
      action(async (repo: string | undefined, opts: VerifyOptions) => {
        const { name, remote } = repo
          ? { name: repo, remote: await connect() }
          : await here().then((h) => ({ name: h.copy.config.repo, remote: h.remote }));
        if (opts.chain) return verifyChain(name, remote);
        const r = await verifyLog(
          remote,
          await logGet(remote.server),
          checkpoints(),
          name,
          opts.sequence ?? [],
          [...requiredWitnesses(env.env), ...(opts.witness ?? [])],
        );
        if (!r) throw new CliError(`${name} has no transparency log to check on ${remote.server}`);
        const attested = opts.attestations ? await attestationsOf(remote, r.audit) : undefined;
        if (out().json)
          return out().writeJson({ ...verificationJson(r), ...(attested ? { attestations: attested } : {}) });
        for (const line of verificationLines(r)) out().line(line);
        for (const line of attestationLines(attested ?? [])) out().line(line);
        out().done(
          `history of ${name} verified with proofs: ${r.commits.length} commit(s) in the signed log` +
            (attested ? `, ${attested.length} attestation(s) signed and in the log` : ""),
        );
      }),
    );

  const checkpoints = () => new CheckpointStore(configDir(env.env));
  // The key the checkpoint was just verified with: auditRepo pinned it, or refused a new one.
  const attestationsOf = async (remote: Remote, audit: Audit) => {
    const pinned = await checkpoints().key(remote.server);
    if (!pinned) throw new CliError(`no transparency-log key pinned for ${remote.server}`);
    const branches = new Set([
      "main",
      ...(await remote.branches(audit.repo, { status: "active" })).map((b) => b.name),
    ]);
    return verifyAttestations(await logGet(remote.server), pinned, audit, [...branches]);
  };
  const logGet = async (server: string) => {
    const token = await env.token(server);
    const dev = env.devIdentity();
    return fetchLogGet(server, {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(dev ? { "x-quire-dev-identity": dev } : {}),
    });
  };
  const verifyChain = async (name: string, remote: Remote) => {
    const r = await verify(name, remote);
    if (out().json) out().writeJson({ repo: name, ...r });
    if (r.firstBad) {
      const bad = r.firstBad;
      throw new CliError(
        `hash chain broken at sequence ${bad.sequence} (branch '${bad.branch}'): ${bad.reason}`,
        {
          hint: "the server's history was altered or damaged; report it to the service's operators",
        },
      );
    }
    if (!out().json)
      out().done(`hash chain intact: ${r.commits} commit(s) on ${r.branches} branch(es) of ${name}`);
  };

  program
    .command("resolve")
    .description(
      "After a pull: mark conflicted paths resolved. Against main: settle a branch's conflicts by taking one side (--take)",
    )
    .argument("[paths...]", "conflicted paths (default: all)")
    .addOption(
      new Option("--take <side>", "for conflicts with main: whose content to keep").choices([
        "main",
        "branch",
      ]),
    )
    .action(
      action(async (paths: string[], o: { take?: "main" | "branch" }) => {
        const { copy, remote } = await here();
        if (o.take === undefined) return resolvePulled(out(), copy, paths);
        const r = await resolve(copy, remote, { paths, take: o.take });
        if (out().json) return out().writeJson(r);
        out().done(
          `took ${o.take}'s side of ${r.resolved.length} path(s) in commit(s) ${r.commits.join(", ")}${r.rebased ? "; rebased onto main" : ""}`,
        );
        if (r.remaining.length > 0) {
          out().line(`still in conflict (${r.remaining.length}):`);
          out().line(conflictTable(r.remaining, style()));
        } else out().note("no conflicts left: `quire merge` when ready");
      }),
    );
}
