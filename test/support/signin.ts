import type { TestApp } from "./app.ts";
import { type Client, clientOver, readReply } from "./client.ts";
import type { TokenOptions } from "./idp.ts";

/**
 * Browser sign-in driven over plain HTTP, as a browser would follow it: /auth/login, the test
 * provider's authorize endpoint (which signs in `email` without a page), /auth/callback.
 */

/** Each step's response, for tests that look at one of them. */
export interface SignInSteps {
  login: Response;
  authorize: Response;
  callback: Response;
  /** `name=value` of the login cookie /auth/login set. */
  loginCookie: string;
}

/** The `name=value` part of a `Set-Cookie` value. */
export const cookiePair = (setCookie: string): string => setCookie.split(";")[0] ?? "";

/** The `Set-Cookie` value for cookie `name` (with or without the `__Host-` prefix), if any. */
export function setCookieNamed(res: Response, name: string): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`) || c.startsWith(`__Host-${name}=`));
}

const manual = { redirect: "manual" } as const;

/**
 * Runs the three steps; `tamper` may change the callback URL (and `loginCookie`) before the
 * browser follows it. Does not assert success: see `signIn`.
 */
export async function signInSteps(
  app: TestApp,
  email: string,
  opts: {
    returnTo?: string;
    idToken?: TokenOptions;
    tamper?: (callback: URL, loginCookie: string) => { callback: URL; loginCookie: string };
  } = {},
): Promise<SignInSteps> {
  app.idp.signInAs(email, opts.idToken);
  const query = opts.returnTo === undefined ? "" : `?${new URLSearchParams({ return_to: opts.returnTo })}`;
  const login = await fetch(`${app.url}/auth/login${query}`, manual);
  let loginCookie = cookiePair(setCookieNamed(login, "quire_login") ?? "");
  const authorize = await fetch(login.headers.get("location") ?? "", manual);
  let callback = new URL(authorize.headers.get("location") ?? "");
  if (opts.tamper) ({ callback, loginCookie } = opts.tamper(callback, loginCookie));
  const res = await fetch(callback, { ...manual, headers: loginCookie ? { cookie: loginCookie } : {} });
  return { login, authorize, callback: res, loginCookie };
}

/** A browser signed in as `email`: its session cookie (`name=value`) and CSRF token. */
export interface BrowserSession {
  cookie: string;
  csrfToken: string;
  /** Where the callback sent the browser. */
  location: string;
}

/** Signs `email` in; throws unless the callback set a session cookie. */
export async function signIn(
  app: TestApp,
  email: string,
  opts: { returnTo?: string } = {},
): Promise<BrowserSession> {
  const steps = await signInSteps(app, email, opts);
  const session = setCookieNamed(steps.callback, "quire_session");
  if (steps.callback.status !== 302 || !session)
    throw new Error(`sign-in failed: ${steps.callback.status} ${await steps.callback.text()}`);
  const cookie = cookiePair(session);
  return {
    cookie,
    csrfToken: await csrfTokenOf(app.url, cookie),
    location: steps.callback.headers.get("location") ?? "",
  };
}

/** The session's CSRF token, as the sign-out page's form carries it. */
export async function csrfTokenOf(base: string, cookie: string): Promise<string> {
  const page = await (await fetch(`${base}/auth/logout`, { headers: { cookie } })).text();
  const token = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1];
  if (!token) throw new Error("the sign-out page shows no CSRF token: not signed in");
  return token;
}

/**
 * A client that sends the session cookie as a browser page of the service would: its own
 * `Origin` and the CSRF token on every request (`headers` adds or overrides; `null` removes).
 */
export function cookieClient(
  base: string,
  session: Pick<BrowserSession, "cookie" | "csrfToken">,
  headers: Record<string, string | null> = {},
): Client {
  return clientOver(async (method, path, init = {}) => {
    const all: Record<string, string | null> = {
      cookie: session.cookie,
      origin: base,
      "x-csrf-token": session.csrfToken,
      ...init.headers,
      ...headers,
    };
    const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== null));
    return readReply(
      await fetch(base + path, { method, headers: sent, body: init.body as string | undefined, ...manual }),
    );
  });
}
