import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { OPENAPI_FILE, SNAPSHOT_COMMAND, SQL_DIR, staticSnapshots } from "../../scripts/snapshots/files.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

const committed = (file: string) =>
  existsSync(path.join(root, file)) ? readFileSync(path.join(root, file), "utf8") : undefined;

/** Expected is the committed file, so a diff's + lines are what the command would write. */
const stale = (file: string) => `${file} is stale: run \`${SNAPSHOT_COMMAND}\` and commit the result`;

describe("generated files committed for review", () => {
  const expected = staticSnapshots(root);

  it(`${OPENAPI_FILE} is the document GET /openapi.json serves`, () => {
    expect(expected.get(OPENAPI_FILE), stale(OPENAPI_FILE)).toBe(committed(OPENAPI_FILE));
  });

  it(`${SQL_DIR}/ holds every SQL statement of shared/ and functions/, one file per module`, () => {
    const files = [...expected.keys()].filter((f) => f.startsWith(`${SQL_DIR}/`));
    const present = readdirSync(path.join(root, SQL_DIR)).map((f) => `${SQL_DIR}/${f}`);
    expect(files.sort(), stale(SQL_DIR)).toEqual(present.sort());
    for (const file of files) expect(expected.get(file), stale(file)).toBe(committed(file));
  });

  it("lists every prepared statement under its name (the catalogue's scanner misses none)", () => {
    const catalogue = [...expected].filter(([f]) => f.startsWith(`${SQL_DIR}/`)).map(([, text]) => text);
    const headings = new Set(catalogue.join("\n").match(/^-- .*$/gm));
    const names = sourceFiles().flatMap((f) => [
      ...readFileSync(path.join(root, f), "utf8").matchAll(/\bprepared\s*(?:<[^()]*>)?\(\s*"([\w.-]+)"/g),
    ]);
    expect(names.length).toBeGreaterThan(10);
    for (const [, name] of names)
      expect(
        [...headings].some((h) => h === `-- ${name} (prepared)` || h.includes(` ${name}`)),
        `${name}`,
      ).toBe(true);
  });
});

function sourceFiles(dir = ""): string[] {
  if (dir === "") return ["shared", "functions"].flatMap((d) => sourceFiles(d));
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(`${dir}/${e.name}`) : e.name.endsWith(".ts") ? [`${dir}/${e.name}`] : [],
  );
}
