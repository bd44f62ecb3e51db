import type pg from "pg";
import { describe, expect, it } from "vitest";
import { Rollback, withTx } from "../../shared/db/tx.ts";

/**
 * A pool whose clients record the statements they are sent. `failures` are thrown, one per
 * attempt, by the work's first statement: the way PostgreSQL reports a deadlock victim.
 */
function fakePool(opts: { rollbackFails?: boolean } = {}) {
  const log: string[] = [];
  const released: boolean[] = [];
  const client = {
    query: async (text: string) => {
      log.push(text);
      if (text === "ROLLBACK" && opts.rollbackFails) throw new Error("Connection terminated");
      return { rows: [], rowCount: 0 };
    },
    release: (broken?: boolean) => released.push(broken === true),
  };
  const pool = { connect: async () => client, query: client.query } as unknown as pg.Pool;
  return { pool, log, released };
}

const pgError = (code: string) => Object.assign(new Error(`error ${code}`), { code });

describe("withTx", () => {
  it("commits when the work returns, and hands the client back", async () => {
    const { pool, log, released } = fakePool();
    const result = await withTx(pool, async (tx) => {
      await tx.query("UPDATE x");
      return "done";
    });
    expect(result).toBe("done");
    expect(log).toEqual(["BEGIN", "UPDATE x", "COMMIT"]);
    expect(released).toEqual([false]);
  });

  it("rolls back and rethrows when the work throws", async () => {
    const { pool, log } = fakePool();
    await expect(withTx(pool, async () => Promise.reject(new Error("bad input")))).rejects.toThrow(
      "bad input",
    );
    expect(log).toEqual(["BEGIN", "ROLLBACK"]);
  });

  it("rolls back a dry run and returns its value", async () => {
    const { pool, log } = fakePool();
    const value = await withTx(pool, async () => {
      throw new Rollback({ would: "merge" });
    });
    expect(value).toEqual({ would: "merge" });
    expect(log).toEqual(["BEGIN", "ROLLBACK"]);
  });

  it.each(["40P01", "40001"])("runs a transaction that lost a race (%s) again", async (code) => {
    const { pool, log } = fakePool();
    let attempts = 0;
    const result = await withTx(pool, async () => {
      attempts++;
      if (attempts < 3) throw pgError(code);
      return attempts;
    });
    expect(result).toBe(3);
    expect(log).toEqual(["BEGIN", "ROLLBACK", "BEGIN", "ROLLBACK", "BEGIN", "COMMIT"]);
  });

  it("gives up after three attempts with the last error", async () => {
    const { pool } = fakePool();
    let attempts = 0;
    const run = withTx(pool, async () => {
      attempts++;
      throw pgError("40P01");
    });
    await expect(run).rejects.toMatchObject({ code: "40P01" });
    expect(attempts).toBe(3);
  });

  it("does not retry other errors", async () => {
    const { pool } = fakePool();
    let attempts = 0;
    const run = withTx(pool, async () => {
      attempts++;
      throw pgError("23505");
    });
    await expect(run).rejects.toMatchObject({ code: "23505" });
    expect(attempts).toBe(1);
  });

  it("drops a client whose ROLLBACK failed instead of handing it back", async () => {
    const { pool, released } = fakePool({ rollbackFails: true });
    await expect(withTx(pool, async () => Promise.reject(new Error("bad")))).rejects.toThrow("bad");
    expect(released).toEqual([true]);
  });
});
