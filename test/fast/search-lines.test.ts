import { describe, expect, it } from "vitest";
import { LINES_PER_FILE, matchingLines, searchTermProblem } from "../../shared/search/search.ts";

describe("the matching lines of a search result", () => {
  it("marks each match case-insensitively, numbers lines from 1 and counts the lines not shown", () => {
    const body = ["a Fox and a fox", "none", ...Array.from({ length: 8 }, (_, i) => `fox ${i}`)].join("\n");
    const { lines, lineCount } = matchingLines(body, "fox");
    expect(lineCount).toBe(9);
    expect(lines).toHaveLength(LINES_PER_FILE);
    expect(lines[0]).toEqual({
      number: 1,
      parts: [
        { text: "a ", match: false },
        { text: "Fox", match: true },
        { text: " and a ", match: false },
        { text: "fox", match: true },
      ],
    });
    expect(lines[1]?.number).toBe(3);
  });

  it("takes the term literally and cuts a long line around its first match", () => {
    expect(matchingLines("a.b(c) and abbc", "a.b(c)").lines[0]?.parts).toEqual([
      { text: "a.b(c)", match: true },
      { text: " and abbc", match: false },
    ]);
    const long = `${"x".repeat(1000)}needle${"y".repeat(1000)}`;
    const parts = matchingLines(long, "needle").lines[0]?.parts ?? [];
    expect(parts[0]).toEqual({ text: "…", match: false });
    expect(parts.at(-1)).toEqual({ text: "…", match: false });
    expect(parts.filter((p) => p.match)).toEqual([{ text: "needle", match: true }]);
    expect(parts.map((p) => p.text).join("").length).toBeLessThan(250);
  });

  it("refuses terms the trigram index cannot serve", () => {
    expect(searchTermProblem("fox")).toBeNull();
    expect(searchTermProblem("été")).toBeNull();
    expect(searchTermProblem("ab")).toMatch(/three letters/);
    expect(searchTermProblem("a.b.c")).toMatch(/three letters/);
    expect(searchTermProblem("   ")).toMatch(/type something/);
    expect(searchTermProblem("x".repeat(201))).toMatch(/at most 200/);
    expect(searchTermProblem("one\ntwo")).toMatch(/one line/);
  });
});
