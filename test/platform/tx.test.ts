import pg from "pg";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { requireBranch } from "../../shared/branches/branches.ts";
import { firstRowOf, prepared } from "../../shared/db/pool.ts";
import { Rollback, type Tx, withTx } from "../../shared/db/tx.ts";
import { EVENTS_CHANNEL } from "../../shared/events/notify.ts";
import { recordEvent } from "../../shared/events/record.ts";
import { freshDatabase } from "../support/app.ts";

/** The transaction helper: its after-commit hooks, and the type that only it makes; typed rows. */

let pool: pg.Pool;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await freshDatabase(), max: 3 });
});
afterAll(async () => {
  await pool.end();
});

const lost = () => Object.assign(new Error("deadlock detected"), { code: "40P01" });

describe("tx.afterCommit", () => {
  it("runs a hook once, after COMMIT, with the pool, however often it was registered", async () => {
    const seen: { pool: pg.Pool; committed: boolean }[] = [];
    const hook = (p: pg.Pool) => seen.push({ pool: p, committed: false });
    await withTx(pool, async (tx) => {
      tx.afterCommit(hook);
      tx.afterCommit(hook);
      await tx.query("CREATE TEMP TABLE t (x int)");
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual([{ pool, committed: false }]);
  });

  it("drops the hooks of a transaction that throws, or rolls back on purpose", async () => {
    const ran: string[] = [];
    await expect(
      withTx(pool, async (tx) => {
        tx.afterCommit(() => ran.push("thrown"));
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    const value = await withTx(pool, async (tx) => {
      tx.afterCommit(() => ran.push("dry run"));
      throw new Rollback("nothing changed");
    });
    expect(value).toBe("nothing changed");
    expect(ran).toEqual([]);
  });

  it("runs only the hooks of the attempt that committed when a lost race is run again", async () => {
    const ran: number[] = [];
    let attempt = 0;
    const result = await withTx(pool, async (tx) => {
      const mine = ++attempt;
      tx.afterCommit(() => ran.push(mine));
      if (mine < 3) throw lost();
      return mine;
    });
    expect(result).toBe(3);
    expect(ran).toEqual([3]);
  });

  it("gives every attempt a transaction of its own", async () => {
    const seen: Tx[] = [];
    await withTx(pool, async (tx) => {
      seen.push(tx);
      if (seen.length === 1) throw lost();
    });
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toBe(seen[1]);
  });
});

describe("recordEvent", () => {
  it("wakes the deliverers once its transaction commits", async () => {
    const listener = new pg.Client({ connectionString: pool.options.connectionString });
    await listener.connect();
    try {
      await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
      const woken = new Promise((resolve) => listener.once("notification", resolve));
      await withTx(pool, (tx) =>
        recordEvent(tx, "com.svc.org.created", { org: "acme", created_by: "a@x.test" }, { org: "acme" }),
      );
      expect(await woken).toMatchObject({ channel: EVENTS_CHANNEL });
    } finally {
      await listener.end();
    }
  });
});

describe("Tx", () => {
  it("is required where a function must run inside a transaction (checked by tsc)", () => {
    // Never called: tsc checks that a pool or a bare client is refused where a Tx is required.
    const type = "com.svc.org.deleted";
    const data = { org: "acme", deleted_by: "a@x.test" };
    const org = { org: "acme" };
    const lookalike = { query: pool.query.bind(pool), afterCommit() {} };
    const refused = async (client: pg.PoolClient) => {
      // @ts-expect-error a pool is not a transaction
      await recordEvent(pool, type, data, org);
      // @ts-expect-error nor is a bare client: its statements would each commit on their own
      await recordEvent(client, type, data, org);
      // @ts-expect-error nor is an object shaped like a transaction: only withTx makes one
      await recordEvent(lookalike, type, data, org);
      // @ts-expect-error a row lock outside a transaction would end with its statement
      await requireBranch(pool, 1, "main", "update");
      await requireBranch(pool, 1, "main"); // reads take any Queryable
    };
    expect(refused).toBeTypeOf("function");
  });
});

describe("typed statements", () => {
  const numbers = prepared<{ n: number; label: string }>(
    "test_numbers",
    "SELECT n, 'n' || n AS label FROM generate_series(1, $1::int) AS n",
  );

  it("return their first row typed, from the pool or a transaction", async () => {
    const first = await withTx(pool, (tx) => firstRowOf(tx, numbers([3])));
    expectTypeOf(first).toEqualTypeOf<{ n: number; label: string } | undefined>();
    expect(first).toEqual({ n: 1, label: "n1" });
    expectTypeOf(await firstRowOf(pool, numbers([1]))).toEqualTypeOf<
      { n: number; label: string } | undefined
    >();
    expect(await firstRowOf(pool, numbers([0]))).toBeUndefined();
  });
});
