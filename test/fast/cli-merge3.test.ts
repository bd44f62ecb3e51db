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
});
