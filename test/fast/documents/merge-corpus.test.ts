import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { mergeDocument } from "../../../shared/documents/merge/index.ts";

/*
 * Real-world shapes merged as a repo would merge them: each folder of test/documents/corpus/
 * holds base, ours (main) and theirs (the branch) of one file, and either the expected merge
 * (`expected.<ext>`, byte for byte: formatting and comments kept) or the expected conflicts.
 */

const ROOT = path.join(import.meta.dirname, "../../documents/corpus");

const cases = readdirSync(ROOT).map((name) => {
  const files = readdirSync(path.join(ROOT, name));
  const ext = path.extname(files.find((f) => f.startsWith("base.")) ?? "");
  const read = (file: string) => readFileSync(path.join(ROOT, name, file), "utf8");
  const expected = files.includes(`expected${ext}`) ? read(`expected${ext}`) : undefined;
  const conflicts = files.includes("expected-conflicts.json")
    ? JSON.parse(read("expected-conflicts.json"))
    : undefined;
  return {
    name,
    file: `file${ext}`,
    base: read(`base${ext}`),
    ours: read(`ours${ext}`),
    theirs: read(`theirs${ext}`),
    expected,
    conflicts,
  };
});

describe("the corpus of real-world documents", () => {
  it("has the shapes the merge is for", () => {
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining(["package-json", "openapi", "kubernetes", "i18n", "front-matter"]),
    );
  });

  it.each(cases.filter((c) => c.expected !== undefined))(
    "$name merges as expected, whichever side is ours",
    (c) => {
      expect(mergeDocument(c.file, c.base, c.ours, c.theirs)).toMatchObject({ content: c.expected });
      expect(mergeDocument(c.file, c.base, c.theirs, c.ours)).toMatchObject({ content: c.expected });
    },
  );

  it.each(cases.filter((c) => c.conflicts !== undefined))("$name conflicts at the expected paths", (c) => {
    expect(mergeDocument(c.file, c.base, c.ours, c.theirs)).toMatchObject({ conflicts: c.conflicts });
  });

  it("every case expects something", () => {
    expect(cases.filter((c) => c.expected === undefined && c.conflicts === undefined)).toEqual([]);
  });
});
