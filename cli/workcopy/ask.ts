import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline/promises";
import { CopyError } from "./meta.ts";
import type { LocalChange } from "./scan.ts";

/*
 * What the working copy asks a person at a terminal: a yes/no before discarding others' work,
 * and a commit message in their editor (as git does). Without a terminal nothing is asked: the
 * caller refuses and says which flag answers instead.
 */

/** Whether a person can be asked: stdin and stderr (where questions go) are terminals. */
export const canAsk = (): boolean => process.stdin.isTTY === true && process.stderr.isTTY === true;

/** Asks a yes/no question on stderr; anything but y/yes is no. */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** $VISUAL, then $EDITOR, then vi: git's order. */
export const editorOf = (env: Record<string, string | undefined>): string =>
  env["VISUAL"]?.trim() || env["EDITOR"]?.trim() || "vi";

const WORDS: Record<LocalChange["status"], string> = {
  added: "new file:",
  modified: "modified:",
  deleted: "deleted:",
};

/** The file the editor opens: an empty first line, then help lines starting with `#`. */
export function messageTemplate(where: string, changes: LocalChange[]): string {
  return [
    "",
    `# Write the message for your commit to ${where} above.`,
    "# Lines starting with '#' are left out; an empty message aborts the commit.",
    "#",
    "# Changes to be committed:",
    ...changes.map((c) => `#\t${WORDS[c.status].padEnd(11)} ${c.path}`),
    "",
  ].join("\n");
}

/** The message without its `#` lines and surrounding blank lines. */
export const cleanMessage = (text: string): string =>
  text
    .split("\n")
    .filter((l) => !l.startsWith("#"))
    .join("\n")
    .replace(/\s+$/, "")
    .replace(/^\s*\n/, "");

/**
 * Opens the user's editor on a temporary file holding `template` and answers the message
 * written. The editor is run through `sh -c` as git does, so `EDITOR="code --wait"` works.
 */
export async function editMessage(
  env: Record<string, string | undefined>,
  template: string,
): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "quire-commit-"));
  const file = path.join(dir, "COMMIT_MSG");
  try {
    await writeFile(file, template);
    const editor = editorOf(env);
    const r = spawnSync("sh", ["-c", `${editor} "$@"`, editor, file], { stdio: "inherit" });
    if (r.error || r.status !== 0)
      throw new CopyError(
        `the editor '${editor}' failed (${r.error?.message ?? `exit ${r.status}`}); nothing was committed`,
        "set EDITOR (or VISUAL) to an editor that works here, or pass the message with -m",
      );
    return cleanMessage(await readFile(file, "utf8"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
