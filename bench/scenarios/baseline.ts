import { withDb } from "../database.ts";
import { type Budget, type LoadResult, runLoad } from "../load.ts";

// A table of the bench's own in Quire's database, so the baseline writes to the same cluster, WAL
// and disk as the commits it is compared with. Dropped again when the baseline is done.
const baseline_table_create = `
  CREATE TABLE IF NOT EXISTS bench_baseline (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, note text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`;
const baseline_row_insert = `INSERT INTO bench_baseline (note) VALUES ($1)`;
const baseline_table_drop = `DROP TABLE IF EXISTS bench_baseline`;

/**
 * The yardstick: single-row INSERT transactions (BEGIN; INSERT; COMMIT) from one client, one after
 * another. Each pays one WAL flush at COMMIT, which is also the floor under every Quire commit.
 */
export async function measureBaseline(databaseUrl: string, budget: Budget): Promise<LoadResult> {
  return withDb(databaseUrl, async (db) => {
    await db.query(baseline_table_create);
    try {
      return await runLoad({
        label: "baseline INSERT transactions",
        concurrency: 1,
        warmup: 100,
        ...budget,
        send: async (i) => {
          await db.query("BEGIN");
          await db.query(baseline_row_insert, [`row ${i}`]);
          await db.query("COMMIT");
        },
      });
    } finally {
      await db.query(baseline_table_drop);
    }
  });
}
