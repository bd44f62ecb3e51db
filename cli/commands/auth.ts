import type { Command } from "commander";
import { login, openBrowser } from "../auth/login.ts";
import { freshIdToken } from "../auth/refresh.ts";
import { serverKey } from "../auth/store.ts";
import { type CliEnv, normalizeServer } from "../env.ts";
import { CliError } from "../errors.ts";

/**
 * The server `quire login` signs in to when none is given. Not one only a working copy names: the
 * copy may come from anyone, and its server would pick the sign-in page the browser opens.
 */
async function loginServer(env: CliEnv): Promise<string> {
  const r = await env.resolveServer();
  if (r.source === "working copy")
    throw new CliError(`the working copy at ${r.copyRoot} names ${r.url}, which you have not named`, {
      hint: `if you trust it, name it: quire login ${r.url}`,
      exitCode: 2,
    });
  return r.url;
}

/** `quire login`, `quire logout`, `quire whoami`. */
export function register(program: Command, env: CliEnv): void {
  program
    .command("login [server]")
    .description("sign in to a server in the browser (OAuth code flow with PKCE on a loopback redirect)")
    .option("--no-browser", "print the URL to open instead of opening a browser")
    .action(async (serverArg: string | undefined, opts: { browser: boolean }) => {
      const out = env.out;
      const server = serverArg ? normalizeServer(serverArg) : await loginServer(env);
      const session = await login({
        server,
        onUrl: async (url) => {
          const opened = opts.browser && (await openBrowser(url, env.env));
          out.note(
            opened
              ? "Opened your browser to sign in; if it did not appear, open:"
              : "Open this URL to sign in:",
          );
          out.note(url);
        },
      });
      await env.store.save(server, session);
      out.done(`signed in to ${server}${session.email ? ` as ${session.email}` : ""}`, {
        server,
        email: session.email,
        expires_at: new Date(session.expires_at * 1000).toISOString(),
      });
    });

  program
    .command("logout [server]")
    .description("forget the sign-in to a server (default: the current one)")
    .action(async (serverArg: string | undefined) => {
      const server = serverArg ? normalizeServer(serverArg) : await env.server();
      const removed = await env.store.remove(server);
      if (!removed) throw new CliError(`not signed in to ${server}`, { hint: "nothing to do" });
      env.out.done(`signed out of ${server}`, { server, signed_out: true });
    });

  program
    .command("whoami")
    .description("who you are signed in as, where, and until when")
    .action(async () => {
      const server = await env.server();
      if (env.env["QUIRE_TOKEN"]?.trim()) {
        env.out.record({ server, source: "QUIRE_TOKEN" }, [
          { header: "server", value: (r) => r.server },
          { header: "token", value: (r) => r.source },
        ]);
        return;
      }
      const s = await env.store.get(server);
      if (!s) throw new CliError(`not signed in to ${server}`, { hint: `run \`quire login ${server}\`` });
      await freshIdToken(env.store, server, s);
      const now = (await env.store.get(server)) ?? s;
      env.out.record(
        {
          server: serverKey(server),
          email: now.email ?? null,
          issuer: now.issuer,
          expires_at: new Date(now.expires_at * 1000).toISOString(),
        },
        [
          { header: "server", value: (r) => r.server },
          { header: "email", value: (r) => r.email },
          { header: "issuer", value: (r) => r.issuer },
          { header: "expires", value: (r) => r.expires_at, kind: "time" },
        ],
      );
    });
}
