import type { Command } from "commander";
import type { CliEnv } from "../env.ts";
import { CliError, EXIT } from "../errors.ts";
import type { Output } from "../output.ts";
import { canAsk, confirm, editMessage, messageTemplate } from "../workcopy/ask.ts";
import { type Copy, commit, type MoveResult, status } from "../workcopy/copy.ts";
import { readConflicts } from "../workcopy/meta.ts";
import { markResolved, type PullResult, pull } from "../workcopy/pull.ts";
import type { Branch, Remote } from "../workcopy/remote.ts";
import { type Style, statusLines } from "../workcopy/render.ts";

/*
 * The working copy's sync verbs (docs/cli.md, "Working copy"): status, commit and pull, and what
 * `resolve` does after a pull. Registered by cli/commands/workcopy.ts, whose helpers they share.
 */

/** What the working-copy commands share: the opened copy and its remote, error mapping, style. */
export interface CopyKit {
  here: () => Promise<{ copy: Copy; remote: Remote }>;
  action: <A extends unknown[]>(fn: (...args: A) => Promise<void>) => (...args: A) => Promise<void>;
  style: () => Style;
}

export function movedLine(m: MoveResult, what: string): string {
  const kept = m.kept > 0 ? `; ${m.kept} local change(s) kept` : "";
  return m.from === m.sequence && m.written + m.removed === 0 && what === "pull"
    ? `already up to date: '${m.branch}' at ${m.sequence}${kept}`
    : `${what} '${m.branch}' at ${m.sequence} (was ${m.from}): ${m.written} file(s) written, ${m.removed} removed${kept}`;
}

/** The branch's state on the server, or undefined when it cannot be asked (status works offline). */
async function remoteState(copy: Copy, remote: Remote): Promise<Branch["status"] | undefined> {
  try {
    return (await remote.branch(copy.config.repo, copy.config.branch)).status;
  } catch {
    return undefined;
  }
}

/** The message of a commit without -m: from the user's editor, on a terminal only. */
async function messageFromEditor(env: CliEnv, copy: Copy): Promise<string> {
  if (!canAsk())
    throw new CliError("no commit message: pass -m <message>", {
      hint: 'without a terminal no editor can open; give the message as `quire commit -m "what changed"`',
      exitCode: EXIT.usage,
    });
  const { changes } = await status(copy);
  if (changes.length === 0) return "(no changes)"; // commit() refuses with its own message
  const where = `'${copy.config.branch}' of ${copy.config.repo}`;
  const message = await editMessage(env.env, messageTemplate(where, changes));
  if (message === "")
    throw new CliError("aborting the commit: the message is empty", {
      hint: "write a message, or pass -m <message>",
    });
  return message;
}

export function registerSync(program: Command, env: CliEnv, kit: CopyKit): void {
  const out = (): Output => env.out;
  const { here, action, style } = kit;

  program
    .command("status")
    .description("Local changes against the sequence the copy is at, found by content hash")
    .action(
      action(async () => {
        const { copy, remote } = await here();
        const r = await status(copy);
        const conflicts = await readConflicts(copy.root);
        const branchState = await remoteState(copy, remote);
        const { repo, branch, sequence } = copy.config;
        if (out().json)
          return out().writeJson({
            repo,
            branch,
            sequence,
            ...(branchState ? { branch_status: branchState } : {}),
            changes: r.changes,
            conflicts,
          });
        out().line(`${repo} on '${branch}' at ${sequence}`);
        if (branchState && branchState !== "active")
          out().line(
            `'${branch}' ${branchState === "merged" ? "was merged into main" : "was abandoned"}: it takes no more commits; start new work with \`quire switch main\`, then \`quire branch <new-name>\``,
          );
        if (conflicts.length > 0) {
          out().line(`${conflicts.length} path(s) in conflict from the last pull:`);
          for (const c of conflicts) out().line(`  ${c.path} (${c.kind}; remote side ${c.remote})`);
          out().note("edit each one (look for `<<<<<<< local`), then `quire resolve <path>`");
        }
        if (r.changes.length === 0) return out().line("no local changes");
        out().line(`${r.changes.length} local change(s):`);
        for (const l of statusLines(r.changes, style())) out().line(l);
        if (conflicts.length === 0 && branchState !== "merged" && branchState !== "abandoned")
          out().note("commit them with `quire commit -m <message>`");
      }),
    );

  program
    .command("commit")
    .description("Commit every local change as one atomic commit on the copy's branch")
    .option("-m, --message <message>", "the commit message (without it: your $EDITOR opens, as in git)")
    .option("--force", "commit over changes made to the branch since the copy's sequence")
    .option("-y, --yes", "with --force: discard others' changes to the same files without asking")
    .action(
      action(async (o: { message?: string; force?: boolean; yes?: boolean }) => {
        const { copy, remote } = await here();
        const message = o.message ?? (await messageFromEditor(env, copy));
        const confirmDiscard = async (paths: string[], head: number) => {
          const what = `'${copy.config.branch}' changed ${paths.length} of the file(s) you changed since your sequence ${copy.config.sequence} (now at ${head}); --force replaces those changes with yours:`;
          out().note(`${what}\n${paths.map((p) => `  ${p}`).join("\n")}`);
          if (o.yes) return true;
          if (!canAsk())
            throw new CliError("nothing was committed: --force would discard the changes above", {
              hint: "`quire pull` merges them with yours instead; to discard them without a terminal, add --yes",
            });
          return confirm("Discard them?");
        };
        const r = await commit(copy, remote, { message, force: o.force === true, confirmDiscard });
        const extra = r.broughtIn > 0 ? `; ${r.broughtIn} file(s) of newer commits brought in` : "";
        out().done(`committed ${r.files} file(s) to '${r.branch}' as sequence ${r.sequence}${extra}`, r);
      }),
    );

  program
    .command("pull")
    .description("Bring the copy to its branch's head, merging local changes with the remote's (as git)")
    .action(
      action(async () => {
        const { copy, remote } = await here();
        showMerge(out(), await pull(copy, remote), "pull");
      }),
    );
}

/** `quire resolve [paths]` without --take: clears what a pull recorded. */
export async function resolvePulled(out: Output, copy: Copy, paths: string[]): Promise<void> {
  const cleared = await markResolved(copy, paths);
  if (cleared.length === 0)
    throw new CliError("no conflicts from a pull to resolve", {
      hint: "for a branch's conflicts with main, take a side: `quire resolve <path> --take main|branch`",
    });
  const left = await readConflicts(copy.root);
  out.done(`marked ${cleared.length} path(s) resolved: ${cleared.map((c) => c.path).join(", ")}`, {
    resolved: cleared,
    remaining: left,
  });
  if (!out.json)
    out.note(
      left.length > 0
        ? `still in conflict: ${left.map((c) => c.path).join(", ")}`
        : "no conflicts left: `quire commit` when ready",
    );
}

/**
 * What a merging move did (`pull`, `switch --merge`): the move, the paths merged cleanly, and the
 * conflicts, which end the command with exit 1 (the copy did move).
 */
export function showMerge(out: Output, r: PullResult, what: string): void {
  if (out.json) out.writeJson(r);
  else {
    // A pull that left conflicts did not end well: no ✓ for it.
    if (r.conflicts.length > 0) out.line(movedLine(r, what));
    else out.done(movedLine(r, what));
    if (r.merged.length > 0) out.line(`merged your changes with '${r.branch}''s in: ${r.merged.join(", ")}`);
    if (r.status !== "active")
      out.note(
        `'${r.branch}' ${r.status === "merged" ? "was merged into main" : "was abandoned"}: it takes no more commits; \`quire switch main\`, then \`quire branch <new-name>\``,
      );
  }
  if (r.conflicts.length === 0) return;
  if (!out.json) {
    out.line(`conflicts (${r.conflicts.length}):`);
    for (const c of r.conflicts) out.line(`  ${c.path} (${c.kind})`);
  }
  throw new CliError(
    `the ${what === "pull" ? "pull" : "switch"} left ${r.conflicts.length} path(s) in conflict`,
    {
      hint:
        "edit each file (text conflicts are between `<<<<<<< local` and `>>>>>>> " +
        `${r.branch}@${r.sequence}\`), then \`quire resolve <path>\` and \`quire commit\``,
    },
  );
}
