import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { copyWorld } from "./workcopy-support.ts";

/** `quire diff` of JSON and YAML files: the changed places after each text diff, and in `--json`. */

const app = useFixture(startTestApp);

const entry = z.looseObject({ path: z.string(), patch: z.string(), structure: z.unknown().optional() });

const CONFIG = "# limits\nlimits:\n  max_files: 10\nowners:\n  - name: ann\n";
const PACKAGE = `{"name": "widget", "version": "1.0.0", "description": "${"d".repeat(60)}"}\n`;

describe("quire diff of JSON and YAML files", () => {
  it("shows each file's changed places after its text diff, locally and for a branch", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit(
        "main",
        { "config.yaml": CONFIG, "package.json": PACKAGE, "notes.md": "n\n" },
        "start",
      );
      await w.json(["clone", w.repo.repo, "c"]);
      await w.json(["branch", "bump"], "c");
      await w.write("c/config.yaml", `${CONFIG.replace("10", "20")}  - name: cy\n`);
      await w.write("c/package.json", PACKAGE.replace("1.0.0", "1.1.0").replace(/d{60}/, "e".repeat(60)));
      await w.write("c/notes.md", "changed\n");

      const local = await w.run(["diff"], "c");
      expect(local.code).toBe(0);
      expect(local.stdout).toContain("+  max_files: 20");
      const table = local.stdout.slice(local.stdout.indexOf("structure of config.yaml"));
      expect(table.split("\n").slice(0, 4)).toEqual([
        "structure of config.yaml (yaml): 2 places changed",
        "  PLACE              CHANGE   OLD  NEW",
        "  limits.max_files   changed  10   20",
        '  owners[name="cy"]  added         {"name":"cy"}',
      ]);
      // A long value is cut in the table (the JSON output has it whole).
      expect(local.stdout).toContain(`"${"d".repeat(38)}…`);
      expect(local.stdout).not.toContain("structure of notes.md");

      const entries = z.array(entry).parse(await w.json(["diff"], "c"));
      const byPath = (list: z.infer<typeof entry>[], p: string) => list.find((e) => e.path === p);
      expect(byPath(entries, "package.json")?.structure).toEqual({
        format: "json",
        multi_document: false,
        truncated: false,
        paths: [
          { path: "version", op: "changed", old: "1.0.0", new: "1.1.0" },
          { path: "description", op: "changed", old: "d".repeat(60), new: "e".repeat(60) },
        ],
      });
      expect(byPath(entries, "notes.md")).not.toHaveProperty("structure");

      await w.json(["commit", "-m", "bump"], "c");
      const branch = z
        .looseObject({ changes: z.array(entry) })
        .parse(await w.json(["diff", "--branch"], "c"));
      expect(byPath(branch.changes, "config.yaml")?.structure).toMatchObject({
        paths: [
          { path: "limits.max_files", op: "changed", old: 10, new: 20 },
          { path: 'owners[name="cy"]', op: "added", new: { name: "cy" } },
        ],
      });
      const text = await w.run(["diff", "--branch"], "c");
      expect(text.stdout).toContain("structure of package.json (json): 2 places changed");
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});
