import type { Command } from "commander";
import type { MeResponse } from "../../shared/api/cli-auth.ts";
import { jwtClaims, jwtExpiry, whenText } from "../auth/jwt.ts";
import { login, openBrowser } from "../auth/login.ts";
import { freshIdToken } from "../auth/refresh.ts";
import { serverKey } from "../auth/store.ts";
import { createClient, QuireApiError } from "../client/index.ts";
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
      const dev = await devIdentityOf(server);
      if (dev) {
        out.done(`no sign-in needed: ${server} runs with DEV_IDENTITY, and every request is ${dev}`, {
          server,
          identity: dev,
          via: "dev_identity",
        });
        return;
      }
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
    .description("who the server takes you to be, with which token, and until when")
    .action(async () => {
      const server = await env.server();
      const fromEnv = env.env["QUIRE_TOKEN"]?.trim();
      let session = fromEnv ? null : await env.store.get(server);
      if (session) {
        await freshIdToken(env.store, server, session);
        session = (await env.store.get(server)) ?? session;
      }
      const token = fromEnv || session?.id_token;
      const me = await askServer(env, Boolean(token));
      const claims = token ? jwtClaims(token) : {};
      const exp = token ? jwtExpiry(token) : undefined;
      const via = fromEnv
        ? "QUIRE_TOKEN"
        : session
          ? "quire login"
          : me?.via === "dev_identity"
            ? "none needed"
            : null;
      if (!me && !token)
        throw new CliError(`not signed in to ${server}`, {
          hint: `sign in with \`quire login ${server}\` (where the server offers CLI sign-in), or set QUIRE_TOKEN to an ID token`,
        });
      const row = {
        server: serverKey(server),
        identity: me?.identity ?? null,
        global_admin: me?.global_admin ?? null,
        server_sees: me?.via ?? null,
        token: via,
        email: typeof claims["email"] === "string" ? claims["email"] : (session?.email ?? null),
        issuer: typeof claims["iss"] === "string" ? claims["iss"] : (session?.issuer ?? null),
        expires_at: exp?.toISOString() ?? null,
      };
      if (env.out.json) return env.out.writeJson(row);
      env.out.record(row, [
        { header: "server", value: (r) => r.server },
        { header: "identity", value: (r) => r.identity ?? "(the server did not say: it has no GET /me)" },
        {
          header: "global admin",
          value: (r) => (r.global_admin === null ? null : r.global_admin ? "yes" : "no"),
        },
        { header: "token", value: (r) => r.token },
        { header: "email", value: (r) => r.email },
        { header: "issuer", value: (r) => r.issuer },
        { header: "expires", value: () => (exp ? whenText(exp) : null) },
      ]);
      if (me?.via === "dev_identity")
        env.out.note(
          `this server runs with DEV_IDENTITY: every request is ${me.identity}, whatever token is sent; no sign-in is needed (with DEV_IDENTITIES, \`quire --as <email>\` acts as another listed identity)`,
        );
    });
}

/**
 * `GET /me`: the server's view of the caller. Undefined when it answers 404 (a server older than
 * the route) or, without a token, 401 (not signed in); a token it refuses is an error (expired…).
 */
async function askServer(env: CliEnv, withToken: boolean): Promise<MeResponse | undefined> {
  try {
    return await (await env.client()).get("/me");
  } catch (e) {
    if (e instanceof QuireApiError && (e.status === 404 || (e.status === 401 && !withToken)))
      return undefined;
    throw e;
  }
}

/**
 * The identity a development server gives everyone (DEV_IDENTITY), asked of `GET /me` without a
 * token; undefined for any other server, or one that cannot say.
 */
async function devIdentityOf(server: string): Promise<string | undefined> {
  const client = createClient({ server, token: async () => null, userAgent: "quire-cli" });
  try {
    const me = await client.get("/me");
    return me.via === "dev_identity" ? me.identity : undefined;
  } catch {
    return undefined;
  }
}
