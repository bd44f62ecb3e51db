import { readFile } from "node:fs/promises";
import path from "node:path";
import { freshIdToken } from "./auth/refresh.ts";
import { CredentialStore, configDir } from "./auth/store.ts";
import { createClient, type QuireClient } from "./client/index.ts";
import { CliError } from "./errors.ts";
import { Output } from "./output.ts";

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
  /** The bearer token for `server`: QUIRE_TOKEN, or the stored sign-in (refreshed when due). */
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

/** The server of the working copy around `cwd` (its `.quire/copy.json`), if any. */
export async function copyServer(cwd: string): Promise<string | undefined> {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    try {
      const meta = JSON.parse(await readFile(path.join(dir, ".quire", "copy.json"), "utf8")) as {
        server?: unknown;
      };
      if (typeof meta.server === "string") return meta.server;
    } catch {}
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Normalizes what a user typed as a server: `quire.example.com` means https, no trailing slash. */
export function normalizeServer(raw: string): string {
  const trimmed = raw.trim().replace(/\/+$/, "");
  const withScheme = /^https?:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
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
  const env: CliEnv = {
    env: o.env,
    cwd: o.cwd,
    out,
    store,
    flags,
    async server() {
      const named =
        flags.server ?? o.env["QUIRE_SERVER"] ?? (await copyServer(o.cwd)) ?? (await store.lastServer());
      if (!named)
        throw new CliError("no server to talk to", {
          hint: "sign in with `quire login <server>`, or pass --server, or set QUIRE_SERVER",
          exitCode: 2,
        });
      return normalizeServer(named);
    },
    async token(server) {
      const fromEnv = o.env["QUIRE_TOKEN"]?.trim();
      if (fromEnv) return fromEnv;
      const s = await store.get(server);
      return s ? freshIdToken(store, server, s) : null;
    },
    devIdentity: () => flags.as ?? (o.env["QUIRE_AS"] || undefined),
    async client() {
      const server = await env.server();
      return createClient({
        server,
        token: () => env.token(server),
        userAgent: "quire-cli",
        devIdentity: env.devIdentity(),
      });
    },
  };
  return env;
}
