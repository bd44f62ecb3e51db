import { beforeAll, describe, expect, it } from "vitest";
import { renderChanges } from "../../functions/web/pages/diff.ts";
import { highlighter, highlightLines, languageOf } from "../../functions/web/pages/highlight.ts";

// The pages' routes load highlight.js before a page runs (functions/web/routes.ts); so do these.
beforeAll(() => highlighter.load());

/** Server-side highlighting and the diff renderer, without a server (docs/web.md, "Code and diffs"). */
describe("highlighting", () => {
  it("escapes the text and balances each line's spans", () => {
    const lines = highlightLines('<a href="x">\n<!-- a\nb --><script>alert(1)</script>\n', "xml").map(String);
    expect(lines).toHaveLength(3);
    expect(lines.join("\n")).not.toMatch(/<(a|script|!--)\b/);
    expect(lines[1]).toMatch(/^<span class="hljs-comment">&lt;!-- a<\/span>$/);
    for (const line of lines)
      expect(line.match(/<span /g)?.length ?? 0).toBe(line.match(/<\/span>/g)?.length ?? 0);
  });

  it("picks the language by name, then content type, else plain", () => {
    expect(languageOf("src/a.ts")).toBe("typescript");
    expect(languageOf("Dockerfile")).toBe("dockerfile");
    expect(languageOf("config", "application/yaml")).toBe("yaml");
    expect(languageOf("notes.unknown", "text/plain")).toBeNull();
    expect(highlightLines("a <b>\n", null).map(String)).toEqual(["a &lt;b&gt;"]);
  });
});

describe("the diff renderer", () => {
  const layoutHref = (layout: string) => `?view=${layout}`;
  it("counts and labels text and binary changes, and escapes what it shows", () => {
    const page = renderChanges(
      [
        { path: "a.txt", status: "modified", before: "one\n<two>\n", after: "one\n<three>\n" },
        {
          path: "b.bin",
          status: "modified",
          before: { binary: true, size: 3 },
          after: { binary: true, size: 5 },
        },
        { path: "c.txt", status: "added", patch: "", binary: false },
      ],
      { layout: "unified", layoutHref },
    ).text;
    expect(page).toContain(
      '3 files changed</strong>, <span class="added">+1</span> <span class="removed">&minus;1</span>',
    );
    expect(page).toContain("Binary file (3 bytes &rarr; 5 bytes), not shown.");
    expect(page).toContain("No text diff");
    expect(page).toContain("&lt;three&gt;");
    expect(page).not.toContain("<three>");
  });

  it("cuts a file of more rows than a page shows, unless asked for it whole", () => {
    const big = { path: "big.txt", status: "added" as const, before: null, after: "x\n".repeat(3_000) };
    const cut = renderChanges([big], { layout: "split", layoutHref }).text;
    expect(cut).toContain("Large diff not shown");
    const whole = renderChanges([big], { layout: "split", layoutHref, whole: true }).text;
    expect(whole.match(/<td class="code add">/g)).toHaveLength(3_000);
  });
});
