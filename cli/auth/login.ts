import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { CliError, plainHttpHint } from "../errors.ts";
import { expiryOf, tokenRequest } from "./refresh.ts";
import type { Session } from "./store.ts";

/*
 * `quire login`: the OAuth 2.0 authorization code flow for native apps (RFC 8252) with PKCE S256
 * (RFC 7636), `state` and an OpenID `nonce`, on a loopback redirect: a one-request HTTP server on
 * 127.0.0.1 at a port the system picks. The server names the provider and client in `GET
 * /auth/cli` (docs/cli.md); the provider's endpoints come from its discovery document.
 */

/** What `GET /auth/cli` answers (shared/api/cli-auth.ts). */
export interface CliAuthSettings {
  issuer: string;
  client_id: string;
  client_secret?: string;
  scopes: string[];
}

interface Discovery {
  authorization_endpoint: string;
  token_endpoint: string;
}

export interface LoginOptions {
  server: string;
  /** Called with the URL the user must open; opening a browser is the caller's choice. */
  onUrl(url: string): void;
  /** Give up after this long without the browser coming back. */
  timeoutMs?: number;
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");
const random = () => b64url(randomBytes(32));

async function getJson<T>(url: string, what: string, hint: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json" } });
  } catch (err) {
    throw new CliError(`could not reach ${url} (${(err as Error).message})`, {
      hint: plainHttpHint(err, url) ?? hint,
    });
  }
  if (!res.ok) {
    const text = await res.text();
    let message = text.slice(0, 200);
    try {
      message = (JSON.parse(text) as { error: string }).error ?? message;
    } catch {}
    throw new CliError(`${what} answered ${res.status}: ${message}`, { hint });
  }
  return (await res.json()) as T;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font:16px system-ui;margin:4em"><h1>${title}</h1><p>${text}</p>`;

/** The claims of a JWT's payload (unverified: the CLI only reads its own token's nonce and email). */
function claimsOf(jwt: string): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8")) as Record<
      string,
      unknown
    >;
  } catch {
    return {};
  }
}

/** Runs the flow to its end; answers the session to keep. */
export async function login(opts: LoginOptions): Promise<Session> {
  const settings = await getJson<CliAuthSettings>(
    `${opts.server}/auth/cli`,
    `${opts.server}/auth/cli`,
    "this server may offer no CLI sign-in (SVC_CLI_CLIENT_ID unset): set QUIRE_TOKEN to an ID token it accepts instead, with QUIRE_SERVER naming the server; or check the server URL",
  );
  const discovery = await getJson<Discovery>(
    `${settings.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`,
    "the identity provider's discovery document",
    "the server's identity provider is unreachable from here",
  );
  const verifier = random();
  const state = random();
  const nonce = random();

  const server = http.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const url = new URL(discovery.authorization_endpoint);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: settings.client_id,
    redirect_uri: redirectUri,
    scope: settings.scopes.join(" "),
    state,
    nonce,
    code_challenge: b64url(createHash("sha256").update(verifier).digest()),
    code_challenge_method: "S256",
    // Google issues a refresh token only for offline access, and again only with consent.
    access_type: "offline",
    prompt: "consent",
  }))
    url.searchParams.set(k, v);

  try {
    const code = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new CliError("gave up waiting for the browser", { hint: "run `quire login` again" })),
        opts.timeoutMs ?? 300_000,
      );
      server.on("request", (req, res) => {
        const q = new URL(req.url ?? "/", redirectUri).searchParams;
        if (!req.url?.startsWith("/callback")) {
          res.writeHead(404).end();
          return;
        }
        const fail = (title: string, err: CliError) => {
          res.writeHead(400, { "content-type": "text/html; charset=utf-8" }).end(PAGE(title, err.message));
          clearTimeout(timer);
          reject(err);
        };
        if (q.get("state") !== state)
          return fail(
            "Sign-in refused",
            new CliError("sign-in refused: the answer's state is not the one this login sent", {
              hint: "someone else's sign-in reached this one; run `quire login` again",
            }),
          );
        const error = q.get("error");
        if (error)
          return fail(
            "Sign-in failed",
            new CliError(
              `the identity provider refused: ${error}${q.get("error_description") ? ` (${q.get("error_description")})` : ""}`,
              {
                hint: "run `quire login` again",
              },
            ),
          );
        const c = q.get("code");
        if (!c) return fail("Sign-in failed", new CliError("the identity provider sent no code"));
        res
          .writeHead(200, { "content-type": "text/html; charset=utf-8" })
          .end(PAGE("Signed in", "You are signed in to Quire; you may close this tab."));
        clearTimeout(timer);
        resolve(c);
      });
      opts.onUrl(url.toString());
    });

    const answer = await tokenRequest(discovery.token_endpoint, {
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      client_id: settings.client_id,
      code_verifier: verifier,
      ...(settings.client_secret ? { client_secret: settings.client_secret } : {}),
    });
    if (!answer.id_token) throw new CliError("the identity provider answered without an ID token");
    const claims = claimsOf(answer.id_token);
    if (claims["nonce"] !== nonce)
      throw new CliError("sign-in refused: the ID token's nonce is not the one this login sent", {
        hint: "run `quire login` again",
      });
    return {
      issuer: settings.issuer,
      client_id: settings.client_id,
      ...(settings.client_secret ? { client_secret: settings.client_secret } : {}),
      token_endpoint: discovery.token_endpoint,
      id_token: answer.id_token,
      ...(answer.refresh_token ? { refresh_token: answer.refresh_token } : {}),
      expires_at: expiryOf(answer.id_token) ?? Math.floor(Date.now() / 1000) + (answer.expires_in ?? 3600),
      ...(typeof claims["email"] === "string" ? { email: claims["email"] } : {}),
    };
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

/** Opens `url` in the system browser, if there is one; false when none could be started. */
export async function openBrowser(url: string, env: Record<string, string | undefined>): Promise<boolean> {
  const [cmd, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", '""', url]]
        : [env["BROWSER"] || "xdg-open", [url]];
  if (process.platform === "linux" && !env["DISPLAY"] && !env["WAYLAND_DISPLAY"] && !env["BROWSER"])
    return false;
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd as string, args as string[], { stdio: "ignore", detached: true });
      child.once("error", () => resolve(false));
      child.once("spawn", () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
