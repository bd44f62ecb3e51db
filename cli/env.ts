import { readFile } from "node:fs/promises";
import path from "node:path";
import { freshIdToken } from "./auth/refresh.ts";
import { CredentialStore, configDir } from "./auth/store.ts";
import { createClient, type QuireClient } from "./client/index.ts";
import { CliError } from "./errors.ts";
import { Output } from "./output.ts";
import { auditingFetch, requiredWitnesses } from "./transparency/contact.ts";
import { CheckpointStore } from "./transparency/store.ts";

/** The flags every command takes (declared on the program, cli/main.ts). */
export interface GlobalFlags {
  server?: string;
  json?: boolean;
  color?: boolean;
  /** Development mode: act as this one of the server's DEV_IDENTITIES (also QUIRE_AS). */
  as?: string;
}

/**
 * What a command runs with: the process's environment and streams, the resolved server and
 * credentials, and the output helpers. Built once per run (`createEnv`); tests build their own.
 */
export interface CliEnv {
  env: Record<string, string | undefined>;
  cwd: string;
  out: Output;
  store: CredentialStore;
  /** The global flags of this run, filled in before a command's action runs. */
  flags: GlobalFlags;
  /** The server: --server, QUIRE_SERVER, the working copy's, or the last one signed in to. */
  server(): Promise<string>;
  /** The server with where it came from; warns once when the copy's and a named one differ. */
  resolveServer(): Promise<ResolvedServer>;
  /**
   * The bearer token for `server`: QUIRE_TOKEN, or the stored sign-in (refreshed when due).
   * QUIRE_TOKEN is bound to no server, so it goes only to one the user named (--server,
   * QUIRE_SERVER, the last login); asked for another (a working copy's), this throws.
   */
  token(server: string): Promise<string | null>;
  /** A client of the resolved server with the resolved token. */
  client(): Promise<QuireClient>;
  /** Development servers only: who to act as, `--as` else QUIRE_AS (docs/cli.md). */
  devIdentity(): string | undefined;
}

export interface EnvOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

/** The server the working copy around `cwd` names (its `.quire/copy.json`), if any, and its root. */
export async function copyServer(cwd: string): Promise<{ server: string; root: string } | undefined> {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    try {
      const meta = JSON.parse(await readFile(path.join(dir, ".quire", "copy.json"), "utf8")) as {
        server?: unknown;
      };
      if (typeof meta.server === "string") return { server: meta.server, root: dir };
    } catch {}
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * Where a run's server came from. Only a working copy's is not named by the user: anyone can
 * hand them a folder (an archive, a repo holding `.quire/`) whose copy.json names any server.
 */
export type ServerSource = "--server" | "QUIRE_SERVER" | "working copy" | "last login";

export interface ResolvedServer {
  url: string;
  source: ServerSource;
  /** The working copy's root when `source` is "working copy". */
  copyRoot?: string;
}

/** A bare loopback host (`localhost:8080`, `127.0.0.1`, `[::1]:3000`): a development server, plain HTTP. */
const BARE_LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?(\/|$)/i;

/**
 * Normalizes what a user typed as a server: `quire.example.com` means https, a bare loopback
 * `localhost:8080` means http (nothing on this machine serves TLS unasked), no trailing slash.
 */
export function normalizeServer(raw: string): string {
  const trimmed = raw.trim().replace(/\/+$/, "");
  const scheme = BARE_LOOPBACK.test(trimmed) ? "http" : "https";
  const withScheme = /^https?:\/\//i.test(trimmed) ? trimmed : `${scheme}://${trimmed}`;
  try {
    const url = new URL(withScheme);
    return url.origin + url.pathname.replace(/\/+$/, "");
  } catch {
    throw new CliError(`'${raw}' is not a server URL`, {
      hint: "pass e.g. --server https://quire.example.com",
    });
  }
}

/** Whether stdout counts as a terminal: a real one, or FORCE_TTY=1 (tests, `script`-less CI). */
export function isTerminal(o: EnvOptions): boolean {
  const forced = o.env["FORCE_TTY"];
  if (forced !== undefined && forced !== "") return forced !== "0";
  return o.stdout.isTTY === true;
}

/** The user's own choice of server: --server, else QUIRE_SERVER. */
function namedServer(o: EnvOptions, flags: GlobalFlags): ResolvedServer | undefined {
  if (flags.server) return { url: normalizeServer(flags.server), source: "--server" };
  const fromEnv = o.env["QUIRE_SERVER"]?.trim();
  if (fromEnv) return { url: normalizeServer(fromEnv), source: "QUIRE_SERVER" };
  return undefined;
}

/**
 * --server, then QUIRE_SERVER, then the working copy's, then the last login. A named server wins
 * over the copy's (the user said so), but not silently: a copy that names another server may be
 * one the user did not make, and its commits would otherwise land on a server they did not mean.
 */
async function resolveServer(
  o: EnvOptions,
  flags: GlobalFlags,
  store: CredentialStore,
  out: Output,
): Promise<ResolvedServer> {
  const named = namedServer(o, flags);
  const copy = await copyServer(o.cwd);
  if (named) {
    // A copy.json naming no URL at all differs too, and must not stop a run the user pointed.
    let copyUrl: string | undefined;
    try {
      copyUrl = copy && normalizeServer(copy.server);
    } catch {}
    if (copy && copyUrl !== named.url)
      out.note(
        `warning: the working copy at ${copy.root} names server ${copy.server}; using ${named.url} from ${named.source}`,
      );
    return named;
  }
  if (copy) return { url: normalizeServer(copy.server), source: "working copy", copyRoot: copy.root };
  const last = await store.lastServer();
  if (last) return { url: normalizeServer(last), source: "last login" };
  throw new CliError("no server to talk to", {
    hint: "sign in with `quire login <server>`, or pass --server, or set QUIRE_SERVER",
    exitCode: 2,
  });
}

/** Throws unless the user named `server` (--server, QUIRE_SERVER or the last login). */
async function refuseUnnamed(
  o: EnvOptions,
  flags: GlobalFlags,
  store: CredentialStore,
  server: string,
  resolved: ResolvedServer,
): Promise<void> {
  const last = await store.lastServer();
  const trusted = [namedServer(o, flags)?.url, last === undefined ? undefined : normalizeServer(last)];
  if (trusted.includes(normalizeServer(server))) return;
  const why = resolved.copyRoot
    ? `only the working copy at ${resolved.copyRoot} names that server, not --server or QUIRE_SERVER`
    : "neither --server, QUIRE_SERVER nor your last login names that server";
  throw new CliError(`refusing to send QUIRE_TOKEN to ${server}: ${why}`, {
    hint: `if you made this copy and trust ${server}, name it: --server ${server} or QUIRE_SERVER=${server}; a folder from an archive or someone else can name any server (docs/cli.md, "Which server")`,
    exitCode: 2,
  });
}

export function createEnv(o: EnvOptions): CliEnv {
  const flags: GlobalFlags = {};
  const tty = isTerminal(o);
  const noColor = o.env["NO_COLOR"] !== undefined && o.env["NO_COLOR"] !== "";
  const forceColor = o.env["FORCE_COLOR"] !== undefined && o.env["FORCE_COLOR"] !== "0";
  const store = new CredentialStore(configDir(o.env));
  const out = new Output({
    stdout: o.stdout,
    stderr: o.stderr,
    tty,
    // --no-color and NO_COLOR win; FORCE_COLOR turns colour on without a terminal.
    color: () => flags.color !== false && !noColor && (forceColor || tty),
    json: () => flags.json === true,
  });
  let resolved: Promise<ResolvedServer> | undefined;
  const env: CliEnv = {
    env: o.env,
    cwd: o.cwd,
    out,
    store,
    flags,
    async server() {
      return (await env.resolveServer()).url;
    },
    resolveServer() {
      resolved ??= resolveServer(o, flags, store, out);
      return resolved;
    },
    async token(server) {
      const fromEnv = o.env["QUIRE_TOKEN"]?.trim();
      if (fromEnv) {
        await refuseUnnamed(o, flags, store, server, await env.resolveServer());
        return fromEnv;
      }
      const s = await store.get(server);
      return s ? freshIdToken(store, server, s) : null;
    },
    devIdentity: () => flags.as ?? (o.env["QUIRE_AS"] || undefined),
    async client() {
      const server = await env.server();
      return createClient({
        server,
        // Every repo this process touches is first checked against the checkpoint seen last time
        // (and, with QUIRE_REQUIRE_WITNESS set, for those witnesses' cosignatures).
        fetch: auditingFetch(
          server,
          new CheckpointStore(configDir(o.env)),
          fetch,
          () => {},
          requiredWitnesses(o.env),
        ),
        token: () => env.token(server),
        userAgent: "quire-cli",
        devIdentity: env.devIdentity(),
      });
    },
  };
  return env;
}
