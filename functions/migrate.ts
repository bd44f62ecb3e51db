import { ConfigError, loadConfig } from "../shared/config.ts";
import { migrate } from "../shared/db/migrate.ts";
import { configuredDatabase } from "../shared/db/target.ts";

/**
 * `npm run migrate`, and the migration step of a deployment (a Cloud Run job running this file):
 * applies every pending migration to the configured database (Cloud SQL through the connector, or
 * DATABASE_URL) and exits, 0 when the schema is current. The functions themselves never migrate
 * (functions/index.ts refuses to serve on a schema that is behind); locally `npm start` still
 * migrates before it listens.
 */
try {
  const db = await configuredDatabase(loadConfig());
  if (!db)
    throw new ConfigError(
      "invalid configuration:\n  DATABASE_URL: SVC_CLOUD_SQL_INSTANCE or DATABASE_URL is required to migrate",
    );
  try {
    await migrate(db.target);
  } finally {
    db.close();
  }
  console.log("quire: migrations applied; the schema is current");
  process.exit(0);
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
