import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { envSchema, loadConfig } from "../../shared/config.ts";
import { errorStatus } from "../../shared/errors.ts";

/** The rows of the first markdown table after `heading` (or in the whole text), as cells. */
function tableRows(markdown: string, heading?: string): string[][] {
  const from = heading === undefined ? 0 : markdown.indexOf(heading);
  expect(from, `heading ${heading}`).toBeGreaterThanOrEqual(0);
  const lines = markdown.slice(from).split("\n");
  const start = lines.findIndex((l) => l.startsWith("|"));
  const table = lines.slice(
    start,
    lines.findIndex((l, i) => i > start && !l.startsWith("|")),
  );
  return table.slice(2).map((row) =>
    row
      .replace(/^\||\|$/g, "")
      .split("|")
      .map((c) => c.trim()),
  );
}

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");
const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");

describe("docs/errors.md", () => {
  it("lists every code of shared/errors.ts once, with its status, and no other", () => {
    const documented = new Map<string, number>();
    for (const [codes = "", status = ""] of tableRows(read("docs/errors.md"), "| Code |")) {
      for (const code of backticked(codes)) {
        expect(documented.has(code), `${code} is in docs/errors.md twice`).toBe(false);
        documented.set(code, Number(status));
      }
    }
    // As "CODE status" lines, so a failure's diff shows the very code that differs.
    const lines = (m: Iterable<[string, number]>) => [...m].map(([c, s]) => `${c} ${s}`).sort();
    expect(lines(documented), "docs/errors.md against shared/errors.ts").toEqual(
      lines(Object.entries(errorStatus)),
    );
  });
});

describe("README configuration table", () => {
  const rows = tableRows(read("README.md"), "## Configuration");
  const defaults = loadConfig({});

  it("has a row for every variable the configuration accepts, and no other", () => {
    const documented = rows.map(([name = ""]) => backticked(name)[0]);
    expect(documented.sort(), "README.md against shared/config.ts").toEqual(
      Object.keys(envSchema.shape).sort(),
    );
  });

  it("gives each variable's default as the configuration has it", () => {
    for (const [name = "", given = ""] of rows) {
      const variable = backticked(name)[0] as keyof typeof defaults;
      const value = defaults[variable];
      const literal = typeof value === "string" || typeof value === "number" || typeof value === "boolean";
      // Without a literal default, the cell says what happens instead ("embedded", "generated", …).
      if (literal) expect(given, variable).toBe(`\`${value}\``);
      else expect(given, variable).not.toBe("");
    }
  });
});
