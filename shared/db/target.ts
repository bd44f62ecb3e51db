import type pg from "pg";
import type { Env } from "../config.ts";

/**
 * Where the database is: a connection string (DATABASE_URL, embedded PostgreSQL, tests), or a
 * node-postgres client configuration whose `stream` opens a connection through the Cloud SQL
 * connector. Every place that opens a connection (the pool, migrations, the LISTEN client, the
 * webhook deliverers' pool) takes one of these, so all of them reach Cloud SQL the same way.
 */
export type DatabaseTarget = string | pg.ClientConfig;

/** The client configuration of a target, for `new pg.Client(...)` or `new pg.Pool(...)`. */
export function clientConfig(target: DatabaseTarget): pg.ClientConfig {
  return typeof target === "string" ? { connectionString: target } : { ...target };
}

/** A target and what must be closed with it (the connector's certificate refresh timers). */
export interface ConfiguredDatabase {
  target: DatabaseTarget;
  close(): void;
}

/**
 * The database of the cloud functions and the migration step: Cloud SQL through the connector
 * when SVC_CLOUD_SQL_INSTANCE is set (IAM database authentication: the connector asks the Cloud
 * SQL Admin API for an ephemeral client certificate carrying the instance's service account's
 * OAuth token, so there is no password; SVC_DB_USER logs in with SVC_DB_PASSWORD instead), else
 * DATABASE_URL; undefined when neither is set.
 */
export async function configuredDatabase(config: Env): Promise<ConfiguredDatabase | undefined> {
  const instance = config.SVC_CLOUD_SQL_INSTANCE;
  if (instance === undefined)
    return config.DATABASE_URL ? { target: config.DATABASE_URL, close: () => {} } : undefined;
  // Imported only here: a process given DATABASE_URL never loads the connector (nor its Google
  // auth and API clients).
  const { AuthTypes, Connector, IpAddressTypes } = await import("@google-cloud/cloud-sql-connector");
  const connector = new Connector(
    config.SVC_CLOUD_SQL_ADMIN_ENDPOINT ? { sqlAdminAPIEndpoint: config.SVC_CLOUD_SQL_ADMIN_ENDPOINT } : {},
  );
  try {
    // A built-in user (the migration step's, docs/deploy.md "Migrations") logs in with its
    // password; everyone else as an IAM user on the token.
    const builtIn = config.SVC_DB_USER !== undefined;
    const { stream } = await connector.getOptions({
      instanceConnectionName: instance,
      ipType: IpAddressTypes[config.SVC_CLOUD_SQL_IP_TYPE],
      authType: builtIn ? AuthTypes.PASSWORD : AuthTypes.IAM,
    });
    const login = builtIn
      ? { user: config.SVC_DB_USER, password: config.SVC_DB_PASSWORD }
      : { user: config.SVC_DB_IAM_USER };
    return {
      target: { stream, ...login, database: config.SVC_DB_NAME },
      close: () => connector.close(),
    };
  } catch (err) {
    connector.close();
    throw err;
  }
}
