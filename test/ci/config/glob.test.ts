import { describe, expect, it } from "vitest";
import { globProblem, MAX_GLOB_LENGTH, matchesBranch } from "../../../shared/ci/config/glob.ts";

describe("matchesBranch", () => {
  it.each([
    // [pattern, branch, matches]
    ["main", "main", true],
    ["main", "main2", false],
    ["main", "feature/main", false],
    // `*` stays within one segment
    ["feature/*", "feature/a", true],
    ["feature/*", "feature/a/b", false],
    ["feature/*", "feature", false],
    ["*", "main", true],
    ["*", "feature/a", false],
    ["*-fix", "hot-fix", true],
    ["feature/*/wip", "feature/a/wip", true],
    ["feature/*/wip", "feature/a/b/wip", false],
    // `**` as a whole segment crosses `/`, and also matches the folder itself (picomatch)
    ["release/**", "release/1.0", true],
    ["release/**", "release/1.0/hotfix", true],
    ["release/**", "release", true],
    ["release/**", "releases/1.0", false],
    ["**", "a/b/c", true],
    ["**/wip", "wip", true],
    ["**/wip", "a/b/wip", true],
    ["**/wip", "a/b/wip2", false],
    // `**` inside a segment is just `*`
    ["rel**", "release", true],
    ["rel**", "release/1.0", false],
    // `?` is exactly one character, never `/`
    ["v?.x", "v1.x", true],
    ["v?.x", "v10.x", false],
    ["v?.x", "v.x", false],
    ["a?b", "a/b", false],
    // character classes, ranges, negation inside a class, POSIX classes
    ["[ab]*", "apple", true],
    ["[ab]*", "bugfix", true],
    ["[ab]*", "cherry", false],
    ["v[0-9].*", "v1.2", true],
    ["v[0-9].*", "vx.2", false],
    ["[!ab]*", "cherry", true],
    ["[!ab]*", "apple", false],
    ["[^ab]*", "cherry", true],
    ["[[:digit:]]*", "1.0", true],
    ["[[:digit:]]*", "main", false],
    // `.` is an ordinary character (dot: true), and case matters
    ["*", ".hidden", true],
    ["v1.*", "v1.x", true],
    ["v1.*", "v1x", false],
    ["Main", "main", false],
  ])("%j vs %j: %s", (pattern, branch, expected) => {
    expect(matchesBranch([pattern], branch)).toBe(expected);
  });

  it("matches everything with no patterns, and any one of several", () => {
    expect(matchesBranch([], "anything/at/all")).toBe(true);
    expect(matchesBranch(["main", "release/**"], "release/2")).toBe(true);
    expect(matchesBranch(["main", "release/**"], "feature/x")).toBe(false);
  });
});

describe("globProblem", () => {
  it.each(["main", "feature/*", "release/**", "**", "v?.x", "[ab]*", "[!a-c]x", "[[:alpha:]]*", "a.b_c-d/e"])(
    "accepts %j",
    (pattern) => {
      expect(globProblem(pattern)).toBeNull();
    },
  );

  it.each([
    ["", "must not be empty"],
    ["x".repeat(MAX_GLOB_LENGTH + 1), `must be at most ${MAX_GLOB_LENGTH} characters`],
    ["!main", "negation is not supported"],
    ["{main,dev}", "brace expansion is not supported"],
    ["release/{a,b}", "brace expansion is not supported"],
    ["/main", "must not start or end with '/'"],
    ["release/", "must not start or end with '/'"],
    ["a//b", "must not contain '//'"],
    ["@(a|b)", `must not contain "@"`],
    ["a b", `must not contain " "`],
    ["a\\*", `must not contain "\\\\"`],
    ["[ab", "unterminated character class '[' at position 1"],
    ["x[]", "empty character class at position 2"],
    ["[!]", "empty character class"],
    ["[a/b]", "must not contain '/' inside a character class"],
    ["[[:letters:]]", "unknown POSIX class"],
  ])("refuses %j: %s", (pattern, fragment) => {
    expect(globProblem(pattern)).toContain(fragment);
  });
});
