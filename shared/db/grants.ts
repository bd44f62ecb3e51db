import pg from "pg";
import { clientConfig, type DatabaseTarget } from "./target.ts";

/**
 * What the other database users may do, granted by the migration step after every run. In the
 * cloud the step logs in as a built-in user that owns the schema (Cloud SQL gives IAM users no
 * privileges, and PUBLIC may not create in schema `public`); the services log in as their own IAM
 * users, which own nothing (docs/deploy.md, "Migrations"). Each grant is made on the tables that
 * exist and as a default privilege of the owner, so a table a later migration adds is covered
 * even before the step grants again.
 */

/**
 * The functions: read and write every table, use every sequence; no DDL (they own nothing and
 * have no CREATE on the schema). TRUNCATE, REFERENCES and TRIGGER are not needed and not given.
 */
const APPLICATION_GRANTS = [
  "GRANT USAGE ON SCHEMA public TO %u",
  "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO %u",
  "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO %u",
  "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %u",
  "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO %u",
];

/**
 * The event stream service: it reads (access checks, the event log for streams and
 * Last-Event-ID) and writes only the relay's cursor and, for retention, deletes old events.
 */
const STREAM_SERVICE_GRANTS = [
  "GRANT USAGE ON SCHEMA public TO %u",
  "GRANT SELECT ON ALL TABLES IN SCHEMA public TO %u",
  "GRANT INSERT, UPDATE ON event_relay_cursors TO %u",
  "GRANT DELETE ON events TO %u",
  "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO %u",
];

async function grantEach(target: DatabaseTarget, users: readonly string[], grants: readonly string[]) {
  if (users.length === 0) return;
  const client = new pg.Client(clientConfig(target));
  await client.connect();
  try {
    for (const user of users)
      for (const grant of grants) await client.query(grant.replaceAll("%u", client.escapeIdentifier(user)));
  } finally {
    await client.end();
  }
}

/** Grants each of `users` what the functions need; a user that does not exist fails. */
export function grantApplication(target: DatabaseTarget, users: readonly string[]): Promise<void> {
  return grantEach(target, users, APPLICATION_GRANTS);
}

/** Grants each of `users` what the event stream service needs; a user that does not exist fails. */
export function grantStreamService(target: DatabaseTarget, users: readonly string[]): Promise<void> {
  return grantEach(target, users, STREAM_SERVICE_GRANTS);
}
