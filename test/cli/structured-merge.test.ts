import path from "node:path";
import { describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { copyWorld, quire } from "./workcopy-support.ts";

/**
 * Issue 23's "Done when" through the CLI (docs/merge.md): two people edit different keys of one
 * commented YAML file (and different paragraphs of one Markdown file), one on main and one on a
 * branch, each through a working copy; `quire merge` merges both edits with the comments kept, and
 * a real conflict names the file and the path.
 */
const app = useFixture(startTestApp);
const BOB = "bob@example.com";

const CONFIG = `# Service limits; keep them low on staging.
limits:
  max_files: 100 # cap per commit
  max_bytes: 1048576
owners:
  - ann # on call in June
`;

const GUIDE = "# Guide\n\nFirst paragraph.\n\nSecond paragraph.\n\nThird paragraph.\n";

describe("quire merge of YAML and Markdown files both people changed", () => {
  it("merges different keys keeping comments, and names limits.max_files for a real conflict", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.grant(BOB, "maintainer");
      const bobToken = await app.idp.token(BOB);
      const bob = (args: string[], sub: string) =>
        quire(args, { cwd: path.join(w.dir, sub), home: w.dir, server: app.url, token: bobToken });
      const onMainAt = async (file: string) => {
        const res = await api(w.repo.client).get("/repos/:repo*/-/file/:path*", {
          params: { repo: w.repo.repo, path: file },
          query: { branch: "main" },
        });
        if (!res.ok) throw new Error(`${file} not on main: ${res.status}`);
        return Buffer.from(res.body.content, "base64").toString();
      };
      await w.repo.commit("main", { "config.yaml": CONFIG, "guide.md": GUIDE });

      // Ann works on main; Bob on a branch, from his own copy.
      await w.json(["clone", w.repo.repo, "ann"]);
      expect((await bob(["clone", w.repo.repo, "bob"], "")).code).toBe(0);
      expect((await bob(["branch", "raise"], "bob")).code).toBe(0);
      await w.write("bob/config.yaml", CONFIG.replace("max_bytes: 1048576", "max_bytes: 2097152"));
      await w.write("bob/guide.md", GUIDE.replace("Third paragraph.", "Third, reworded."));
      expect((await bob(["commit", "-m", "more bytes"], "bob")).code).toBe(0);
      await w.write("ann/config.yaml", CONFIG.replace("max_files: 100", "max_files: 200"));
      await w.write("ann/guide.md", GUIDE.replace("First paragraph.", "First, clearer."));
      await w.json(["commit", "-m", "more files"], "ann");

      const merged = await bob(["merge"], "bob");
      expect(merged.code, merged.stderr).toBe(0);
      expect(merged.stdout).toContain("merged 'raise' into main");
      expect(await onMainAt("guide.md")).toBe(
        GUIDE.replace("First paragraph.", "First, clearer.").replace("Third paragraph.", "Third, reworded."),
      );
      expect(await onMainAt("config.yaml")).toBe(
        CONFIG.replace("max_files: 100", "max_files: 200").replace(
          "max_bytes: 1048576",
          "max_bytes: 2097152",
        ),
      );

      // Both change max_files: the refusal names the file and the place, with each side's value.
      expect((await bob(["switch", "main"], "bob")).code).toBe(0);
      expect((await bob(["branch", "clash"], "bob")).code).toBe(0);
      const onMain = await w.read("bob/config.yaml");
      await w.write("bob/config.yaml", onMain.replace("max_files: 200", "max_files: 500"));
      expect((await bob(["commit", "-m", "even more"], "bob")).code).toBe(0);
      await w.json(["pull"], "ann");
      await w.write("ann/config.yaml", onMain.replace("max_files: 200", "max_files: 300"));
      await w.json(["commit", "-m", "a bit more"], "ann");

      const refused = await bob(["merge"], "bob");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("the branch conflicts with main");
      expect(refused.stdout).toMatch(/config\.yaml +limits\.max_files +200 +300 +500/);
      const json = await bob(["--json", "merge"], "bob");
      expect(JSON.parse(json.stdout)).toMatchObject({
        outcome: "conflict",
        conflicts: [
          {
            path: "config.yaml",
            merge: "yaml",
            paths: [{ path: "limits.max_files", base: 200, ours: 300, theirs: 500 }],
          },
        ],
      });

      // The branch's status says where, too.
      const status = await bob(["branches", "status", w.repo.repo, "clash"], "bob");
      expect(status.code).toBe(1);
      // Off a terminal the table is tab-separated rows: path, main, branch, where.
      expect(status.stdout).toMatch(/^config\.yaml\t\w+\t\w+\tlimits\.max_files$/m);
    } finally {
      await w.cleanup();
    }
  }, 240_000);
});
