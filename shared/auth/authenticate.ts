import type { IncomingHttpHeaders } from "node:http";
import type { AppContext } from "../context.ts";
import { fail } from "../errors.ts";
import type { Actor } from "./actor.ts";
import type { IdTokenVerifier } from "./idtoken.ts";
import type { JobTokenVerifier } from "./jobtoken.ts";
import { findSession } from "./sessions.ts";

export interface Authenticator {
  /**
   * The caller, null when no credentials were sent; throws UNAUTHENTICATED for bad ones. `ctx` is
   * the request's context, against which a job token is checked (its issuer is the server's own
   * address unless configured, known only once the server listens) and a session looked up.
   */
  authenticate(headers: IncomingHttpHeaders, ctx: AppContext): Promise<Actor | null>;
  /** The ID-token verifier bearer tokens go through, which browser sign-in uses too. */
  idTokens: IdTokenVerifier;
}

/**
 * Bearer ID tokens and CI job tokens, else the session cookie of browser sign-in, or — with
 * DEV_IDENTITY set, for local development only — everyone is that identity without any token
 * check. A bearer token whose (unverified) `iss` is our own job issuer is a job token and is
 * verified as one (shared/auth/jobtoken.ts); every other bearer token is an ID token of the
 * identity provider. A request with an Authorization header is judged by it alone.
 */
export function createAuthenticator(opts: {
  verifier: IdTokenVerifier;
  jobTokens: JobTokenVerifier;
  devIdentity?: string | undefined;
  globalAdmins: ReadonlySet<string>;
}): Authenticator {
  // Identities are emails and compare case-insensitively: Quire keeps them in lower case.
  const actorFor = (email: string): Actor => {
    const identity = email.toLowerCase();
    return { identity, globalAdmin: opts.globalAdmins.has(identity) };
  };
  return {
    idTokens: opts.verifier,
    async authenticate(headers, ctx) {
      if (opts.devIdentity) return actorFor(opts.devIdentity);
      const header = headers.authorization;
      if (header === undefined || header === "") {
        const session = await findSession(ctx, headers);
        if (!session) return null;
        const { csrfToken, idHash } = session;
        return { ...actorFor(session.identity), session: { csrfToken, idHash } };
      }
      const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
      if (token === undefined) fail("UNAUTHENTICATED", "the Authorization header must be 'Bearer <token>'");
      if (opts.jobTokens.claimsOurIssuer(ctx, token)) return opts.jobTokens.verify(ctx, token);
      return actorFor(await opts.verifier.verify(token));
    },
  };
}
