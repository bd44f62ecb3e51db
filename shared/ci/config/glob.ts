import picomatch from "picomatch";

/**
 * Branch globs of `on.push.branches` and `on.proposal.base_branches` (docs/ci-config.md).
 * picomatch with git-like options: no brace expansion, no extglobs, no `!` negation, and `*`
 * matches names starting with `.` too. `*` and `?` stay within one `/` segment; `**` as a whole
 * segment crosses them.
 */
const OPTIONS: picomatch.PicomatchOptions = {
  posix: true,
  nobrace: true,
  noextglob: true,
  nonegate: true,
  dot: true,
};

export const MAX_GLOB_LENGTH = 200;

/** Compiled matchers by pattern: the same few patterns are matched on every delivery. */
const compiled = new Map<string, (s: string) => boolean>();
const MAX_COMPILED = 1000;

function matcher(pattern: string): (s: string) => boolean {
  let m = compiled.get(pattern);
  if (!m) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    m = picomatch(pattern, OPTIONS);
    compiled.set(pattern, m);
  }
  return m;
}

/** Whether `branch` matches any of `patterns`; no patterns match every branch. */
export function matchesBranch(patterns: readonly string[], branch: string): boolean {
  if (patterns.length === 0) return true;
  return patterns.some((p) => matcher(p)(branch));
}

// Characters of branch names (docs/names.md) plus the glob characters outside classes.
const LITERAL = /[A-Za-z0-9._/-]/;
const POSIX_CLASSES = new Set([
  "alnum",
  "alpha",
  "ascii",
  "blank",
  "cntrl",
  "digit",
  "graph",
  "lower",
  "print",
  "punct",
  "space",
  "upper",
  "word",
  "xdigit",
]);

/**
 * Why `pattern` is not an acceptable branch glob, or null when it is. picomatch never refuses a
 * pattern, and with these options `!main` or `{a,b}` are literal text no branch name can
 * contain, so a pattern that could never match is refused here instead of silently matching
 * nothing.
 */
export function globProblem(pattern: string): string | null {
  if (pattern === "") return "must not be empty";
  if (pattern.length > MAX_GLOB_LENGTH) return `must be at most ${MAX_GLOB_LENGTH} characters`;
  if (pattern.startsWith("!"))
    return "must not start with '!': negation is not supported, list the branches to run on";
  if (pattern.startsWith("/") || pattern.endsWith("/")) return "must not start or end with '/'";
  if (pattern.includes("//")) return "must not contain '//'";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === "[") {
      const end = classEnd(pattern, i);
      if (typeof end === "string") return end;
      i = end;
    } else if (c === "{" || c === "}") {
      return "must not contain '{' or '}': brace expansion is not supported, list each pattern";
    } else if (c !== "*" && c !== "?" && !LITERAL.test(c)) {
      return `must not contain ${JSON.stringify(c)}: use letters, digits, '.', '_', '-', '/', '*', '?' and character classes like [a-z]`;
    }
  }
  return null;
}

/** The index of the `]` closing the class opened at `open`, or why the class is malformed. */
function classEnd(pattern: string, open: number): number | string {
  let i = open + 1;
  if (pattern[i] === "!" || pattern[i] === "^") i++;
  const first = i;
  while (i < pattern.length && pattern[i] !== "]") {
    if (pattern[i] === "/") return "must not contain '/' inside a character class";
    if (pattern.startsWith("[:", i)) {
      const close = pattern.indexOf(":]", i + 2);
      const name = close < 0 ? "" : pattern.slice(i + 2, close);
      if (!POSIX_CLASSES.has(name)) return `has an unknown POSIX class at position ${i + 1}`;
      i = close + 2;
    } else {
      i++;
    }
  }
  if (i >= pattern.length) return `has an unterminated character class '[' at position ${open + 1}`;
  if (i === first) return `has an empty character class at position ${open + 1}`;
  return i;
}
