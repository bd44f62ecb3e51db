import { describe, expect, it } from "vitest";
import { cached, createReadCache } from "../../shared/commits/read-cache.ts";

describe("the read cache's bound", () => {
  it("keeps to its byte budget, least recently used out first", async () => {
    const cache = createReadCache(1000);
    cache.set("a", "A", 100);
    cache.set("b", "B", 100);
    cache.get("a");
    for (let i = 0; i < 9; i++) cache.set(`x${i}`, i, 100); // 1,100 bytes asked for
    expect(cache.stats().bytes).toBeLessThanOrEqual(1000);
    expect(cache.get("a")).toBe("A");
    expect(cache.get("b")).toBeUndefined();
    cache.set("huge", "H", 900); // above an eighth of the budget: not kept
    expect(cache.get("huge")).toBeUndefined();
  });
});

describe("cached", () => {
  it("loads once per key, and keeps null answers (a path absent from a view stays absent)", async () => {
    const cache = createReadCache();
    let loads = 0;
    const load = async () => {
      loads++;
      return null;
    };
    expect(await cached(cache, "k", load, () => 10)).toBeNull();
    expect(await cached(cache, "k", load, () => 10)).toBeNull();
    expect(loads).toBe(1);
  });
});
