import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ISOLATED_FILES } from "../support/isolated-files.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * What a server test file may not do in a process it shares with the files after it
 * (vitest.config.ts, test/support/isolated-files.ts): each of these outlives the file.
 */
const LEAKS: { what: string; pattern: RegExp }[] = [
  {
    what: "imports functions/index.ts",
    pattern: /(import\(|from )["'][^"']*functions\/index\.ts["']/,
  },
  {
    what: "writes process.env",
    pattern: /process\.env(\[[^\]]+\]|\.\w+)?\s*=[^=]|Object\.assign\(process\.env|delete process\.env/,
  },
  { what: "fakes the timers", pattern: /vi\.useFakeTimers/ },
  { what: "mocks a module or a global", pattern: /vi\.(do)?mock\(|vi\.stub(Env|Global)\(/ },
];

/** The server project's files: every test file but the fast tier's and the rehearsal's. */
async function serverTestFiles(): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, "test"), { recursive: true });
  return entries
    .map((f) => path.posix.join("test", f.split(path.sep).join("/")))
    .filter((f) => f.endsWith(".test.ts") && !f.startsWith("test/fast/") && !f.startsWith("test/rehearsal/"))
    .sort();
}

describe("the server test files that need a process of their own", () => {
  it("are every file that leaves something behind in its process, and only those", async () => {
    const leaking: string[] = [];
    for (const file of await serverTestFiles()) {
      const text = await readFile(path.join(ROOT, file), "utf8");
      if (LEAKS.some((l) => l.pattern.test(text))) leaking.push(file);
    }
    expect(leaking).toEqual([...ISOLATED_FILES].sort());
  });

  it("finds what it looks for", () => {
    const samples = [
      'await import("../../functions/index.ts");',
      'import { handler } from "../../functions/index.ts";',
      'process.env["X"] = "1";',
      "process.env = saved;",
      "Object.assign(process.env, { A: 1 });",
      'delete process.env["X"];',
      "vi.useFakeTimers();",
      'vi.mock("pg");',
      'vi.stubEnv("A", "1");',
    ];
    for (const sample of samples)
      expect(
        LEAKS.some((l) => l.pattern.test(sample)),
        sample,
      ).toBe(true);
    for (const harmless of ['if (process.env["X"] === "1") {}', 'runEntry("functions/index.ts", {})'])
      expect(
        LEAKS.some((l) => l.pattern.test(harmless)),
        harmless,
      ).toBe(false);
  });
});
