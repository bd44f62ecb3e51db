import { beforeAll, describe, expect, it } from "vitest";
import { changedPathsTable } from "../../functions/web/pages/changed-paths.ts";
import { renderChanges } from "../../functions/web/pages/diff.ts";
import { highlighter } from "../../functions/web/pages/highlight.ts";

// The pages' routes load highlight.js before a page runs (functions/web/routes.ts); so do these.
beforeAll(() => highlighter.load());

/** The web's "changed paths" table, without a server (docs/web.md, "Changed paths"). */

const layoutHref = (layout: string) => `?view=${layout}`;

describe("the changed paths table", () => {
  it("escapes paths and values, and cuts a long value at 80 characters", () => {
    const table = changedPathsTable({
      format: "json",
      multi_document: false,
      truncated: false,
      paths: [
        { path: 'x["<b>"]', op: "changed", old: "<script>", new: "y".repeat(100) },
        { path: "", op: "removed", old: { a: 1 } },
      ],
    }).text;
    expect(table).toContain("x[&quot;&lt;b&gt;&quot;]");
    expect(table).toContain("&quot;&lt;script&gt;&quot;");
    expect(table).not.toContain("<script>");
    expect(table).toContain(`"${"y".repeat(78)}…`.replaceAll('"', "&quot;"));
    expect(table).toContain("the whole document");
    expect(table).toContain("Changed paths (2 paths)");
  });

  it("says when more paths changed than are listed", () => {
    const paths = [{ path: "a", op: "added" as const, new: 1 }];
    const table = changedPathsTable({ format: "yaml", multi_document: false, truncated: true, paths }).text;
    expect(table).toContain("Changed paths (1+ paths)");
    expect(table).toContain("More paths changed than are listed here");
  });

  it("is shown by the diff renderer for JSON and YAML given as texts, and not for other files", () => {
    const page = renderChanges(
      [
        { path: "c.yaml", status: "modified", before: "a: 1\n", after: "a: 2\n" },
        { path: "c.md", status: "modified", before: "a: 1\n", after: "a: 2\n" },
        { path: "bad.json", status: "modified", before: "{", after: "{}" },
      ],
      { layout: "unified", layoutHref },
    ).text;
    expect(page.match(/class="changed-paths"/g)).toHaveLength(1);
    expect(page).toMatch(/<code>a<\/code>.*changed.*<code>1<\/code>.*<code>2<\/code>/s);
  });
});
