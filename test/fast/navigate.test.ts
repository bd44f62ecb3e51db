import { describe, expect, it } from "vitest";
import { humanSize } from "../../functions/web/pages/tree.ts";
import { parseSide, segmentsMinus } from "../../shared/commits/compare.ts";

describe("humanSize", () => {
  it("shows bytes, then binary units with one decimal below ten", () => {
    expect(
      [0, 1023, 1024, 2048, 10 * 1024 - 1, 15 * 1024, 1536 * 1024, 3 * 1024 ** 3].map(humanSize),
    ).toEqual(["0 B", "1023 B", "1.0 KiB", "2.0 KiB", "10.0 KiB", "15 KiB", "1.5 MiB", "3.0 GiB"]);
  });
});

describe("parseSide", () => {
  it("reads a branch, a sequence or branch@sequence, and nothing else", () => {
    expect(parseSide("main")).toEqual({ branch: "main" });
    expect(parseSide(" feature/x ")).toEqual({ branch: "feature/x" });
    expect(parseSide("42")).toEqual({ sequence: 42 });
    expect(parseSide("feature/x@7")).toEqual({ branch: "feature/x", at: 7 });
    for (const bad of ["", "a b", "x@", "@3", "x@y", "a@1@2", "a@1234567890123456"])
      expect(parseSide(bad)).toBeNull();
  });
});

describe("segmentsMinus", () => {
  const main = (lo: number, hi: number) => ({ branchId: 1, lo, hi });
  const feature = (lo: number, hi: number) => ({ branchId: 2, lo, hi });
  it("keeps what the other view does not read, per branch", () => {
    // feature (own 0..10 over main 0..3) against main 0..5: all of feature, none of main.
    expect(segmentsMinus([feature(0, 10), main(0, 3)], [main(0, 5)])).toEqual([feature(0, 10)]);
    // main 0..5 against feature's view: main's 4..5.
    expect(segmentsMinus([main(0, 5)], [feature(0, 10), main(0, 3)])).toEqual([main(4, 5)]);
    // Two sequences of main: the later one's commits after the earlier; the reverse holds none.
    expect(segmentsMinus([main(0, 9)], [main(0, 4)])).toEqual([main(5, 9)]);
    expect(segmentsMinus([main(0, 4)], [main(0, 9)])).toEqual([]);
    // A rebased view (own from 6) against the view before the rebase (own from 0): both ends cut.
    expect(segmentsMinus([feature(0, 12)], [feature(6, 8)])).toEqual([feature(0, 5), feature(9, 12)]);
  });
});
