import pg from "pg";
import { clientConfig, type DatabaseTarget } from "./target.ts";

/**
 * What the event stream service's database user may do, granted by the migration step after every
 * run (so tables a later migration adds are covered too). The tables belong to the user that
 * migrates (the functions'); the service logs in as its own IAM user (docs/deploy.md, "The event
 * stream service"). It reads (access checks, the event log for streams and Last-Event-ID) and
 * writes only the relay's cursor and, for retention, deletes old events.
 */
const STREAM_SERVICE_GRANTS = [
  "GRANT USAGE ON SCHEMA public TO %u",
  "GRANT SELECT ON ALL TABLES IN SCHEMA public TO %u",
  "GRANT INSERT, UPDATE ON event_relay_cursors TO %u",
  "GRANT DELETE ON events TO %u",
];

/** Grants each of `users` what the event stream service needs; a user that does not exist fails. */
export async function grantStreamService(target: DatabaseTarget, users: readonly string[]): Promise<void> {
  if (users.length === 0) return;
  const client = new pg.Client(clientConfig(target));
  await client.connect();
  try {
    for (const user of users)
      for (const grant of STREAM_SERVICE_GRANTS)
        await client.query(grant.replaceAll("%u", client.escapeIdentifier(user)));
  } finally {
    await client.end();
  }
}
