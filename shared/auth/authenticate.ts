import type { IncomingHttpHeaders } from "node:http";
import type { AppContext } from "../context.ts";
import { fail } from "../errors.ts";
import type { Actor } from "./actor.ts";
import { devMode, refuseDevIdentityHeader } from "./dev-identity.ts";
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
 * DEV_IDENTITY or DEV_IDENTITIES set, for local development only — everyone is the default
 * identity, or the listed one the request names, without any token check. A bearer token whose
 * (unverified) `iss` is our own job issuer is a job token and is verified as one
 * (shared/auth/jobtoken.ts); every other bearer token is an ID token of the identity provider. A request with an Authorization header is judged by it alone.
 */
export function createAuthenticator(opts: {
  verifier: IdTokenVerifier;
  jobTokens: JobTokenVerifier;
  /** Development mode's identities, the default first (shared/auth/dev-identity.ts); empty: off. */
  devIdentities?: readonly string[];
  globalAdmins: ReadonlySet<string>;
}): Authenticator {
  // Identities are emails and compare case-insensitively: Quire keeps them in lower case.
  const actorFor = (email: string): Actor => {
    const identity = email.toLowerCase();
    return { identity, globalAdmin: opts.globalAdmins.has(identity) };
  };
  const dev = devMode(opts.devIdentities ?? []);
  return {
    idTokens: opts.verifier,
    async authenticate(headers, ctx) {
      if (dev) return { ...actorFor(dev.identityOf(headers)), dev: dev.actorInfo };
      refuseDevIdentityHeader(headers);
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
