import { migrate } from "./migrate.ts";

/**
 * `npm start`'s migration in a process of its own (migrate.ts, migrateIfPending): node-pg-migrate
 * and what it loads live and die with this process, never in the server. The database's URL comes
 * in the environment, not the arguments, so that its password is not shown to `ps`.
 */
const url = process.env["QUIRE_MIGRATE_DATABASE_URL"];
if (!url) throw new Error("QUIRE_MIGRATE_DATABASE_URL is not set");
await migrate(url);
