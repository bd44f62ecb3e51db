import { describe, expect, it } from "vitest";
import { CommitGroups, type GroupWork, type Turn } from "../../shared/commits/groups.ts";
import { DomainError } from "../../shared/errors.ts";

/** A promise with its resolve function outside, to finish work when the test says so. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = () => new Promise((r) => setImmediate(r));

/**
 * A group writer that records each group it writes and answers `item!` for each item; it holds
 * its turn until `hold` (if given) resolves, and refuses a group holding an item in `refuse`.
 */
function recorder(opts: { hold?: Promise<void>; refuse?: string; crash?: boolean } = {}) {
  const groups: string[][] = [];
  const work: GroupWork<string, string> = async (turn: Turn<string>) => {
    const { items, leave } = await turn();
    try {
      groups.push(items);
      await opts.hold;
      if (opts.crash && items.length > 1) throw new Error("connection lost");
      if (opts.refuse && items.includes(opts.refuse))
        throw new DomainError("EMPTY_COMMIT", `nothing in ${opts.refuse}`);
      return items.map((i) => `${i}!`);
    } finally {
      leave();
    }
  };
  return { groups, work };
}

describe("CommitGroups (group commit)", () => {
  it("writes the commits that arrive during a group's turn as the next group, each with its own answer", async () => {
    const groups = new CommitGroups();
    const first = deferred();
    const slow = recorder({ hold: first.promise });
    const a = groups.run(1, "main", "a", 10, slow.work);
    await tick();
    const rest = ["b", "c", "d"].map((i) => groups.run(1, "main", i, 10, slow.work));
    await tick();
    expect(slow.groups).toEqual([["a"]]);
    first.resolve();
    expect(await Promise.all([a, ...rest])).toEqual(["a!", "b!", "c!", "d!"]);
    expect(slow.groups).toEqual([["a"], ["b", "c", "d"]]);
  });

  it("keeps each branch's commits in groups of their own, one repo's groups one at a time", async () => {
    const groups = new CommitGroups();
    const first = deferred();
    const w = recorder({ hold: first.promise });
    const runs = [
      groups.run(1, "main", "a", 1, w.work),
      groups.run(1, "main", "b", 1, w.work),
      groups.run(1, "topic", "x", 1, w.work),
      groups.run(1, "main", "c", 1, w.work),
      groups.run(1, "topic", "y", 1, w.work),
    ];
    await tick();
    expect(w.groups).toEqual([["a", "b", "c"]]); // the topic group waits for main's turn
    first.resolve();
    await Promise.all(runs);
    expect(w.groups).toEqual([
      ["a", "b", "c"],
      ["x", "y"],
    ]);
  });

  it("lets another repo's group write during a turn", async () => {
    const groups = new CommitGroups();
    const held = deferred();
    const w = recorder({ hold: held.promise });
    const one = groups.run(1, "main", "a", 1, w.work);
    await tick();
    await expect(groups.run(2, "main", "b", 1, recorder().work)).resolves.toBe("b!");
    held.resolve();
    await one;
  });

  it("runs every commit of a refused group again alone, in the group's order, so only the refused one fails", async () => {
    const groups = new CommitGroups();
    const first = deferred();
    const w = recorder({ hold: first.promise, refuse: "c" });
    // Each commit's transaction takes longer to begin than the next one's: the order of the turns
    // must not follow.
    const slowerFirst =
      (delayMs: number): GroupWork<string, string> =>
      async (turn) => {
        await new Promise((r) => setTimeout(r, delayMs));
        return w.work(turn);
      };
    const runs = ["a", "b", "c", "d"].map((i, k) => groups.run(1, "main", i, 1, slowerFirst(20 - 5 * k)));
    await new Promise((r) => setTimeout(r, 30));
    first.resolve();
    const settled = await Promise.allSettled(runs);
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message))).toEqual([
      "a!",
      "b!",
      "nothing in c",
      "d!",
    ]);
    expect(w.groups).toEqual([["a", "b", "c", "d"], ["a"], ["b"], ["c"], ["d"]]);
  });

  it("fails every commit of a group that failed for another reason, writing none of them again", async () => {
    const groups = new CommitGroups();
    const first = deferred();
    const w = recorder({ hold: first.promise, crash: true });
    const runs = ["a", "b", "c"].map((i) => groups.run(1, "main", i, 1, w.work));
    first.resolve();
    const settled = await Promise.allSettled(runs);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(w.groups).toEqual([["a", "b", "c"]]);
  });

  it("starts a new group when the forming one is full, by count or by body bytes", async () => {
    const groups = new CommitGroups({ items: 2, bytes: 100 });
    const first = deferred();
    const w = recorder({ hold: first.promise });
    const runs = [
      groups.run(1, "main", "a", 10, w.work),
      groups.run(1, "main", "b", 10, w.work),
      groups.run(1, "main", "c", 10, w.work), // full by count: leads the next group
      groups.run(1, "main", "d", 95, w.work), // would pass 100 bytes with c: leads its own
      groups.run(1, "main", "e", 5, w.work),
    ];
    first.resolve();
    await Promise.all(runs);
    expect(w.groups).toEqual([["a", "b"], ["c"], ["d", "e"]]);
  });

  it("ends a group's turn before its work is done, so the next group writes meanwhile", async () => {
    const groups = new CommitGroups();
    const committed = deferred();
    const order: string[] = [];
    const work =
      (name: string): GroupWork<string, string> =>
      async (turn) => {
        const { items, leave } = await turn();
        order.push(`${name} writes`);
        leave();
        if (name === "first") await committed.promise; // its COMMIT, after the turn
        order.push(`${name} committed`);
        return items;
      };
    const first = groups.run(1, "main", "a", 1, work("first"));
    await tick();
    const second = groups.run(1, "topic", "b", 1, work("second"));
    await second;
    expect(order).toEqual(["first writes", "second writes", "second committed"]);
    committed.resolve();
    await first;
  });
});
