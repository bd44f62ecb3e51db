import { ConfigError, loadConfig } from "../shared/config.ts";
import { grantApplication, grantStreamService } from "../shared/db/grants.ts";
import { migrate } from "../shared/db/migrate.ts";
import { configuredDatabase } from "../shared/db/target.ts";

/**
 * `npm run migrate`, and the migration step of a deployment (a Cloud Run job running this file):
 * applies every pending migration to the configured database (Cloud SQL through the connector, or
 * DATABASE_URL), grants the functions' users (SVC_DB_APP_USERS) and the event stream service's
 * (SVC_DB_STREAM_USERS) their rights on the tables (shared/db/grants.ts), and exits, 0 when the schema is current. The functions themselves never migrate
 * (functions/index.ts refuses to serve on a schema that is behind); locally `npm start` still
 * migrates before it listens.
 */
try {
  const config = loadConfig();
  const db = await configuredDatabase(config);
  if (!db)
    throw new ConfigError(
      "invalid configuration: DATABASE_URL: SVC_CLOUD_SQL_INSTANCE or DATABASE_URL is required to migrate",
    );
  try {
    await migrate(db.target);
    await grantApplication(db.target, config.SVC_DB_APP_USERS);
    await grantStreamService(db.target, config.SVC_DB_STREAM_USERS);
  } finally {
    db.close();
  }
  const granted = (kind: string, users: string[]) =>
    users.length ? `; ${kind} rights granted to ${users.join(", ")}` : "";
  console.log(
    `quire: migrations applied; the schema is current${granted("functions'", config.SVC_DB_APP_USERS)}${granted("event stream service", config.SVC_DB_STREAM_USERS)}`,
  );
  process.exit(0);
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
