import { describe, expect, it } from "vitest";
import { hasConflictMarkers, isText, merge3 } from "../../cli/workcopy/merge3.ts";

const lines = (...ls: string[]) => ls.map((l) => `${l}\n`).join("");

describe("merge3 (the working copy's three-way line merge)", () => {
  it("applies changes of both sides to different parts of the file", () => {
    const base = lines("1", "2", "3", "4", "5", "6");
    const ours = lines("1 mine", "2", "3", "4", "5", "6");
    const theirs = lines("1", "2", "3", "4", "5", "6 theirs", "7 theirs");
    expect(merge3(base, ours, theirs, "main@4")).toEqual({
      text: lines("1 mine", "2", "3", "4", "5", "6 theirs", "7 theirs"),
      conflicts: 0,
    });
  });

  it("marks changes to the same lines as a conflict, labelled with the remote side", () => {
    const base = lines("a", "b", "c");
    const r = merge3(base, lines("a", "B mine", "c"), lines("a", "B theirs", "c"), "main@7");
    expect(r.conflicts).toBe(1);
    expect(r.text).toBe(lines("a", "<<<<<<< local", "B mine", "=======", "B theirs", ">>>>>>> main@7", "c"));
    expect(hasConflictMarkers(r.text)).toBe(true);
  });

  it("takes the same change made on both sides once, and keeps a missing final newline", () => {
    expect(merge3("x\ny", "x\nz", "x\nz", "b@1")).toEqual({ text: "x\nz", conflicts: 0 });
    expect(merge3("", "new\n", "other\n", "b@1").conflicts).toBe(1);
  });

  it("tells text from binary", () => {
    expect(isText(Buffer.from("héllo\n"))).toBe(true);
    expect(isText(Buffer.from([0x89, 0x50, 0x00, 0x01]))).toBe(false);
    expect(isText(Buffer.from([0xff, 0xfe, 0x41]))).toBe(false);
  });

  it("marks edits of adjacent lines as a conflict, as git does, and merges an insertion next to untouched lines", () => {
    const base = lines("a", "b", "c", "d");
    expect(merge3(base, lines("a", "B", "c", "d"), lines("a", "b", "C", "d"), "x@1").conflicts).toBe(1);
    expect(merge3(base, lines("new", "a", "b", "c", "d"), lines("a", "b", "c", "d", "end"), "x@1")).toEqual({
      text: lines("new", "a", "b", "c", "d", "end"),
      conflicts: 0,
    });
    // One side deletes a line, the other edits a line two away: both apply.
    expect(merge3(base, lines("b", "c", "d"), lines("a", "b", "c", "D"), "x@1")).toEqual({
      text: lines("b", "c", "D"),
      conflicts: 0,
    });
  });

  it("answers one side when the other did not change, and a change made on both sides once (random files)", () => {
    // A small seeded generator: the same files each run, many shapes of edit.
    let seed = 19;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const file = (n: number) => Array.from({ length: n }, () => `${"abcde"[next(5)]}\n`);
    const edit = (ls: string[]) => {
      const out = [...ls];
      for (let k = next(4); k >= 0; k--) {
        const at = next(out.length + 1);
        if (next(2) === 0) out.splice(at, next(3), ...file(next(3)));
        else out.splice(at, 0, `${"xyz"[next(3)]}\n`);
      }
      return out.join("");
    };
    for (let i = 0; i < 300; i++) {
      const base = file(next(12));
      const ours = edit(base);
      const theirs = edit(base);
      const b = base.join("");
      expect(merge3(b, ours, b, "t@1")).toEqual({ text: ours, conflicts: 0 });
      expect(merge3(b, b, theirs, "t@1")).toEqual({ text: theirs, conflicts: 0 });
      expect(merge3(b, ours, ours, "t@1")).toEqual({ text: ours, conflicts: 0 });
      const both = merge3(b, ours, theirs, "t@1");
      if (both.conflicts === 0) expect(hasConflictMarkers(both.text)).toBe(false);
      else expect(both.text).toContain(">>>>>>> t@1\n");
    }
  });
});
