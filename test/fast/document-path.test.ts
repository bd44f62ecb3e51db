import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatPath, type PathSegment } from "../../shared/documents/path.ts";

/** Reads a formatted path back into its segments: the notation is unambiguous if this inverts it. */
function readPath(path: string): PathSegment[] {
  const token = /^(?:\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])/;
  const segments: PathSegment[] = [];
  for (let rest = path; rest !== ""; ) {
    const m = token.exec(rest);
    if (m === null) throw new Error(`cannot read ${rest}`);
    segments.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (JSON.parse(m[3] ?? "") as string)));
    rest = rest.slice(m[0].length);
  }
  return segments;
}

describe("formatPath", () => {
  it("joins plain keys with dots and puts indices in brackets", () => {
    expect(formatPath(["limits", "max_files"])).toBe("limits.max_files");
    expect(formatPath(["owners", 2])).toBe("owners[2]");
    expect(formatPath(["spec", "containers", 0, "image"])).toBe("spec.containers[0].image");
  });

  it("quotes keys that are not plain identifiers", () => {
    expect(formatPath(["paths", "/repos/{name}", "get"])).toBe('paths["/repos/{name}"].get');
    expect(formatPath(["a.b"])).toBe('["a.b"]');
    expect(formatPath([""])).toBe('[""]');
  });

  it("names the root with the empty string", () => {
    expect(formatPath([])).toBe("");
    expect(formatPath([3])).toBe("[3]");
  });

  it("is unambiguous: every path reads back into the segments it was made of", () => {
    const segment = fc.oneof(fc.string(), fc.nat(), fc.constantFrom("a", "b.c", "x-y", "0", "[1]"));
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), (segments) => {
        expect(readPath(formatPath(segments))).toEqual(segments);
      }),
    );
  });
});
