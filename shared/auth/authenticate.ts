import type { IncomingHttpHeaders } from "node:http";
import { fail } from "../errors.ts";
import type { Actor } from "./actor.ts";
import type { IdTokenVerifier } from "./idtoken.ts";

export interface Authenticator {
  /** The caller, null when no credentials were sent; throws UNAUTHENTICATED for bad ones. */
  authenticate(headers: IncomingHttpHeaders): Promise<Actor | null>;
}

/**
 * Bearer ID tokens, or — with DEV_IDENTITY set, for local development only — everyone is that
 * identity without any token check.
 */
export function createAuthenticator(opts: {
  verifier: IdTokenVerifier;
  devIdentity?: string | undefined;
  globalAdmins: ReadonlySet<string>;
}): Authenticator {
  // Identities are emails and compare case-insensitively: Quire keeps them in lower case.
  const actorFor = (email: string): Actor => {
    const identity = email.toLowerCase();
    return { identity, globalAdmin: opts.globalAdmins.has(identity) };
  };
  return {
    async authenticate(headers) {
      if (opts.devIdentity) return actorFor(opts.devIdentity);
      const header = headers.authorization;
      if (header === undefined || header === "") return null;
      const match = /^Bearer\s+(\S+)$/i.exec(header);
      if (!match) fail("UNAUTHENTICATED", "the Authorization header must be 'Bearer <token>'");
      return actorFor(await opts.verifier.verify(match[1]!));
    },
  };
}
