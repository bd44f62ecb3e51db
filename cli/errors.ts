import { CommanderError } from "commander";
import { QuireApiError } from "./client/errors.ts";
import { StreamRefused } from "./client/sse.ts";

/** Exit codes (docs/cli.md): 0 ok, 1 refused or failed, 2 usage. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A failure the CLI explains itself: a message, what to do next, and its exit code. */
export class CliError extends Error {
  readonly hint: string | undefined;
  readonly exitCode: number;
  constructor(message: string, opts: { hint?: string; exitCode?: number } = {}) {
    super(message);
    this.name = "CliError";
    this.hint = opts.hint;
    this.exitCode = opts.exitCode ?? EXIT.failed;
  }
}

/** A mistake in how the command was called (exit code 2). */
export const usageError = (message: string, hint?: string) =>
  new CliError(message, { exitCode: EXIT.usage, ...(hint ? { hint } : {}) });

/** What to do next after an API error, by its code or status. */
function hintFor(err: { status: number; code: string }): string | undefined {
  switch (err.code) {
    case "UNAUTHENTICATED":
      return "sign in with `quire login`, or set QUIRE_TOKEN";
    case "HEAD_MOVED":
      return "the branch moved: pull the new commits first, or pass --force";
    case "EMPTY_COMMIT":
      return "the files are already as the branch has them: change something first";
    case "MERGE_CONFLICT":
      return "resolve the conflicts (`quire rebase`, then `quire resolve`), then merge again";
    case "BRANCH_DRAFT":
      return "mark the branch ready first: `quire branches ready <repo> <branch>`";
    case "CI_NOT_CONFIGURED":
      return "add a .svc/ci.yaml to the repo's main branch";
    case "ORG_NOT_EMPTY":
      return "delete the org's repos first";
    case "LAST_OWNER":
      return "make someone else an owner first";
    case "INVITE_EMAIL_MISMATCH":
      return "sign in as the email the invite was sent to";
    case "IDEMPOTENCY_IN_PROGRESS":
    case "UNAVAILABLE":
      return "wait a moment and try again";
  }
  if (err.status === 401) return "sign in with `quire login`, or set QUIRE_TOKEN";
  if (err.status === 403) return "ask an owner of the repo or org for a role that allows this";
  if (err.status === 404) return "check the name (repos are `org/name`), and that you may read it";
  if (err.status === 409) return "the state changed or already exists: list it again and retry";
  if (err.status === 400 || err.status === 422) return "see `--help` of this command for what it accepts";
  if (err.status >= 500) return "the server failed; try again, and report it if it persists";
  return undefined;
}

export interface Explained {
  message: string;
  hint?: string | undefined;
  exitCode: number;
  /** For --json: the machine-readable side. */
  json: Record<string, unknown>;
}

/** Any error of a command, as the CLI reports it. */
export function explain(err: unknown, server?: string): Explained {
  if (err instanceof CliError)
    return { message: err.message, hint: err.hint, exitCode: err.exitCode, json: { error: err.message } };
  if (err instanceof QuireApiError) {
    const hint = hintFor(err);
    return {
      message: `${err.body.error} (${err.status} ${err.code})`,
      hint,
      exitCode: EXIT.failed,
      json: { status: err.status, ...err.body },
    };
  }
  if (err instanceof StreamRefused) {
    let code = "HTTP_ERROR";
    let message = err.body;
    try {
      const body = JSON.parse(err.body) as { code: string; error: string };
      code = body.code;
      message = body.error;
    } catch {}
    return {
      message: `${message} (${err.status} ${code})`,
      hint: hintFor({ status: err.status, code }),
      exitCode: EXIT.failed,
      json: { status: err.status, code, error: message },
    };
  }
  if (err instanceof CommanderError)
    return { message: err.message, exitCode: EXIT.usage, json: { error: err.message, code: err.code } };
  const cause = (err as { cause?: { code?: string } })?.cause;
  if (err instanceof TypeError && err.message === "fetch failed")
    return {
      message: `could not reach ${server ?? "the server"}${cause?.code ? ` (${cause.code})` : ""}`,
      hint: "check --server or QUIRE_SERVER, and that the server is up",
      exitCode: EXIT.failed,
      json: { error: "unreachable", server, code: cause?.code },
    };
  const message = err instanceof Error ? err.message : String(err);
  return { message, exitCode: EXIT.failed, json: { error: message } };
}
