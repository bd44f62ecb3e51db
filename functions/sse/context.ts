import { jobSignerFromConfig } from "../../shared/ci/identity/index.ts";
import { systemClock } from "../../shared/clock.ts";
import type { Env } from "../../shared/config.ts";
import { type AppContext, authenticatorFromConfig } from "../../shared/context.ts";
import { createPool } from "../../shared/db/pool.ts";
import type { DatabaseTarget } from "../../shared/db/target.ts";
import { eventHubFromConfig } from "../../shared/events/index.ts";
import { createAccessTable } from "../../shared/http/access.ts";
import type { Logger } from "../../shared/log.ts";

/**
 * A member the event stream service does not have. Touching it throws at once with a message
 * that names it, so a route that needs more than the streams do fails loudly in the tests rather
 * than quietly starting an adapter (a webhook deliverer, a policy engine) in this service.
 */
function absent<T extends object>(member: string): T {
  return new Proxy({} as T, {
    get(_target, prop) {
      if (prop === "then") return undefined; // not a thenable, so `await` on it stays harmless
      throw new Error(`ctx.${member}.${String(prop)}: not available in the event stream service`);
    },
  });
}

/**
 * The context of the event stream service (functions/sse.ts): only what the streams use. The
 * pool (access checks, the event log for Last-Event-ID resumption and retention), the event hub
 * (its feed: Pub/Sub in the cloud), the authenticator and the access table; the job signer too,
 * since a CI job token may read a repo's stream. No blob store, policy engine, webhook deliverer,
 * commit gate or CI adapters.
 */
export function streamContext(config: Env, log: Logger, databaseUrl: DatabaseTarget): AppContext {
  const pool = createPool(databaseUrl);
  return {
    config,
    log,
    pool,
    auth: authenticatorFromConfig(config),
    events: eventHubFromConfig(config, log, pool, databaseUrl),
    clock: systemClock,
    jobSigner: jobSignerFromConfig(config, pool, systemClock),
    selfUrl: `http://127.0.0.1:${config.PORT}`,
    access: createAccessTable(),
    blobs: absent("blobs"),
    policies: absent("policies"),
    webhooks: absent("webhooks"),
    commitGroups: absent("commitGroups"),
    ciWorkers: absent("ciWorkers"),
    ciLogs: absent("ciLogs"),
    reads: absent("reads"),
    logSigner: absent("logSigner"),
  };
}
