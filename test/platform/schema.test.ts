import { readFileSync } from "node:fs";
import pg from "pg";
import { expect, it } from "vitest";
import { SCHEMA_FILE, SNAPSHOT_COMMAND } from "../../scripts/snapshots/files.ts";
import { dumpSchema } from "../../scripts/snapshots/schema.ts";
import { freshDatabase } from "../support/app.ts";

it(`${SCHEMA_FILE} is the schema every migration builds`, async () => {
  const db = new pg.Client({ connectionString: await freshDatabase() });
  await db.connect();
  try {
    const committed = readFileSync(new URL(`../../${SCHEMA_FILE}`, import.meta.url), "utf8");
    // Expected is the committed file, so the diff's + lines are what the command would add.
    const stale = `${SCHEMA_FILE} is stale: run \`${SNAPSHOT_COMMAND}\` and commit the result`;
    expect(await dumpSchema(db), stale).toBe(committed);
  } finally {
    await db.end();
  }
});
