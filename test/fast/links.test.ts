import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The documentation points at things that exist: every relative link and anchor of README.md and
 * docs/*.md resolves, and every code comment (and every doc) that cites a test file names one that
 * is there. Files move; these citations are what silently goes stale.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const tracked = execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" })
  .split("\n")
  .filter((f) => f !== "" && existsSync(path.join(ROOT, f)));
const markdownFiles = tracked.filter((f) => f === "README.md" || /^docs\/[^/]+\.md$/.test(f));
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** The lines of a markdown text outside fenced code blocks (blank inside), inline code kept or blanked. */
function proseLines(markdown: string, inlineCode: "keep" | "blank"): string[] {
  let fenced = false;
  return markdown.split("\n").map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return "";
    }
    if (fenced) return "";
    return inlineCode === "keep" ? line : line.replace(/`[^`]*`/g, "``");
  });
}

/**
 * GitHub's heading ids: lowercase, punctuation removed except `-` and `_`, each space a `-`; a
 * repeated id gets `-1`, `-2`, … in order.
 */
function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown, "keep")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text only
      .replace(/<[^>]+>/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) slugs.add(m[1] ?? "");
  return slugs;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const [i, line] of proseLines(read(file), "blank").entries()) {
    const targets = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? ""),
      ...[...line.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)].map((m) => m[1] ?? ""),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ file, line: i + 1, target });
    }
  }
  return links;
}

/** Why a link does not resolve, or undefined when it does. */
function brokenBecause(link: Link): string | undefined {
  const [pathPart = "", anchor] = link.target.split("#", 2);
  const target =
    pathPart === "" ? link.file : path.join(path.dirname(link.file), decodeURIComponent(pathPart));
  const absolute = path.join(ROOT, target);
  if (!existsSync(absolute)) return `${target} does not exist`;
  if (anchor === undefined || anchor === "") return undefined;
  if (statSync(absolute).isDirectory() || !target.endsWith(".md")) return `${target} is not a markdown file`;
  if (!headingSlugs(read(target)).has(decodeURIComponent(anchor)))
    return `${target} has no heading #${anchor}`;
  return undefined;
}

/** The text of the comments in a source file: `//` and `#` line comments, block comment lines. */
function commentText(file: string, source: string): string[] {
  const hash = /\.(tf|sh|ya?ml|toml)$|Dockerfile$|\.gitignore$/.test(file);
  return source.split("\n").map((line) => {
    const trimmed = line.trim();
    if (/^(\/\*|\*)/.test(trimmed)) return trimmed;
    const slashes = /(?:^|\s)\/\/(.*)$/.exec(line);
    if (slashes) return slashes[1] ?? "";
    if (hash) return /(?:^|\s)#(.*)$/.exec(line)?.[1] ?? "";
    return "";
  });
}

/** `test/…` paths with a file extension, cited as words (not the tail of a URL or a longer path). */
function citedTestPaths(text: string): string[] {
  return [...text.matchAll(/(?<![\w./:-])test\/[\w./-]*\w\.[a-z]+\b/g)].map((m) => m[0]);
}

describe("the documentation's links", () => {
  it("finds the markdown files", () => {
    expect(markdownFiles).toContain("README.md");
    expect(markdownFiles).toContain("docs/deploy.md");
  });

  it("resolves every relative link and anchor of README.md and docs/*.md", () => {
    const broken = markdownFiles.flatMap(relativeLinks).flatMap((link) => {
      const why = brokenBecause(link);
      return why === undefined ? [] : [`${link.file}:${link.line} (${link.target}): ${why}`];
    });
    expect(broken).toEqual([]);
  });
});

describe("citations of test files", () => {
  const exists = (p: string) => existsSync(path.join(ROOT, p));

  it("names only test files that exist, in code comments", () => {
    const sources = tracked.filter((f) => /\.(ts|js|tf|sh|go|ya?ml)$|Dockerfile$/.test(f));
    const missing = sources.flatMap((file) =>
      commentText(file, read(file)).flatMap((text, i) =>
        citedTestPaths(text)
          .filter((p) => !exists(p))
          .map((p) => `${file}:${i + 1} cites ${p}`),
      ),
    );
    expect(missing).toEqual([]);
  });

  it("names only test files that exist, in the docs", () => {
    const missing = markdownFiles.flatMap((file) =>
      read(file)
        .split("\n")
        .flatMap((text, i) =>
          citedTestPaths(text)
            .filter((p) => !exists(p))
            .map((p) => `${file}:${i + 1} cites ${p}`),
        ),
    );
    expect(missing).toEqual([]);
  });
});

describe("headingSlugs (GitHub's rules)", () => {
  it("lowercases, drops punctuation but - and _, turns spaces into - and numbers repeats", () => {
    const slugs = headingSlugs(
      "# Deploying to Google Cloud\n## `npm run build`\n## Who can reach what?\n## A_b - c\n## Notes\n## Notes\n```\n# not a heading\n```\n## Notes\n",
    );
    expect([...slugs]).toEqual([
      "deploying-to-google-cloud",
      "npm-run-build",
      "who-can-reach-what",
      "a_b---c",
      "notes",
      "notes-1",
      "notes-2",
    ]);
  });
});
