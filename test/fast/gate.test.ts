import { describe, expect, it } from "vitest";
import { KeyedGate } from "../../shared/commits/gate.ts";

/** A promise with its resolve function outside, to finish work when the test says so. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("KeyedGate (the per-repo commit queue)", () => {
  it("runs work for one key one at a time, in arrival order", async () => {
    const gate = new KeyedGate();
    const order: string[] = [];
    const first = deferred();
    const a = gate.run(1, async () => {
      order.push("a start");
      await first.promise;
      order.push("a end");
    });
    const b = gate.run(1, async () => order.push("b"));
    const c = gate.run(1, async () => order.push("c"));
    await tick();
    expect(order).toEqual(["a start"]);
    first.resolve();
    await Promise.all([a, b, c]);
    expect(order).toEqual(["a start", "a end", "b", "c"]);
  });

  it("lets work for different keys run at the same time", async () => {
    const gate = new KeyedGate();
    const held = deferred();
    const started: number[] = [];
    const one = gate.run(1, async () => {
      started.push(1);
      await held.promise;
    });
    const two = gate.run(2, async () => started.push(2));
    await two;
    expect(started).toEqual([1, 2]);
    held.resolve();
    await one;
  });

  it("hands back each result, and a failure only to its own caller", async () => {
    const gate = new KeyedGate();
    const failing = gate.run(7, async () => {
      throw new Error("boom");
    });
    const next = gate.run(7, async () => "after");
    await expect(failing).rejects.toThrow("boom");
    await expect(next).resolves.toBe("after");
    await expect(gate.run(7, async () => 42)).resolves.toBe(42);
  });
});
