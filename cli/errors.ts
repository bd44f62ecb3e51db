import { CommanderError } from "commander";
import { jwtExpiry, whenText } from "./auth/jwt.ts";
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
    case "BRANCH_NOT_FOUND":
      return "check the branch's name: `quire branches list <repo> --all` lists them, drafts too";
    case "BRANCH_NOT_ACTIVE":
      return "a merged or abandoned branch takes no more changes: start a new branch from main (`quire branches create <repo> <name>`; in a working copy, `quire switch main` then `quire branch <name>`)";
    case "SELF_APPROVAL":
      return "no role lets anyone approve their own branch: ask another writer of the repo to review it (on a development server with DEV_IDENTITIES, act as one: `quire --as <email> reviews approve`)";
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

/** What the run knew that explains a refusal better: the QUIRE_TOKEN it sent, if any. */
export interface ExplainContext {
  quireToken?: string | undefined;
  now?: Date;
}

/**
 * A 401 while QUIRE_TOKEN is set: "sign in or set QUIRE_TOKEN" would mislead, so say whether it
 * expired (read from its own `exp`) or was refused as it is.
 */
function refusedToken(
  serverSays: string,
  ctx: ExplainContext,
): { message: string; hint: string } | undefined {
  const token = ctx.quireToken?.trim();
  if (!token) return undefined;
  const now = ctx.now ?? new Date();
  const exp = jwtExpiry(token);
  if (exp && exp.getTime() <= now.getTime())
    return {
      message: `QUIRE_TOKEN expired at ${whenText(exp, now)}; the server refused it (401 UNAUTHENTICATED)`,
      hint: "set QUIRE_TOKEN to a fresh ID token (they last about an hour), or unset it and sign in with `quire login`",
    };
  return {
    message: `the server refused QUIRE_TOKEN: ${serverSays} (401 UNAUTHENTICATED)`,
    hint: "QUIRE_TOKEN must be an ID token from the server's identity provider, issued for it; or unset it and sign in with `quire login`",
  };
}

/** Any error of a command, as the CLI reports it. */
export function explain(err: unknown, server?: string, ctx: ExplainContext = {}): Explained {
  if (err instanceof CliError)
    return { message: err.message, hint: err.hint, exitCode: err.exitCode, json: { error: err.message } };
  const token = (err instanceof QuireApiError || err instanceof StreamRefused) && err.status === 401;
  const refused = token ? refusedToken(errorText(err), ctx) : undefined;
  if (refused)
    return {
      ...refused,
      exitCode: EXIT.failed,
      json: { status: 401, code: "UNAUTHENTICATED", error: refused.message },
    };
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
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (err instanceof TypeError && err.message === "fetch failed")
    return {
      message: `could not reach ${server ?? "the server"}${cause?.code ? ` (${cause.code})` : ""}`,
      hint: plainHttpHint(err, server) ?? "check --server or QUIRE_SERVER, and that the server is up",
      exitCode: EXIT.failed,
      json: { error: "unreachable", server, code: cause?.code },
    };
  const message = err instanceof Error ? err.message : String(err);
  return { message, exitCode: EXIT.failed, json: { error: message } };
}

/** The server's own words of an API refusal. */
function errorText(err: QuireApiError | StreamRefused): string {
  if (err instanceof QuireApiError) return err.body.error;
  try {
    return (JSON.parse(err.body) as { error: string }).error;
  } catch {
    return err.body;
  }
}

/**
 * For a failed https request that met a server speaking no TLS (a plain-HTTP server answers a
 * handshake with text OpenSSL calls a "wrong version number"): the hint to write http://.
 */
export function plainHttpHint(err: unknown, server: string | undefined): string | undefined {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (!server?.startsWith("https://") || !cause) return undefined;
  if (!/SSL|EPROTO|TLS/i.test(`${cause.code ?? ""} ${cause.message ?? ""}`)) return undefined;
  const origin = new URL(server).origin;
  return `${origin} was reached but does not answer TLS: a server given without a scheme is taken as https (except a loopback address); if it serves plain HTTP, write http://, e.g. --server ${origin.replace(/^https:/, "http:")}`;
}
