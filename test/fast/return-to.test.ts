import { describe, expect, it } from "vitest";
import { safeReturnTo } from "../../shared/auth/return-to.ts";
import { HOSTILE_RETURN_TO } from "../support/return-to-corpus.ts";

const ORIGIN = "https://quire.example";

/**
 * What a browser does with `location` on the callback's page: the URL it goes to. The value is
 * also decoded once and resolved again, as a later consumer that decodes before redirecting would.
 */
function landings(location: string): URL[] {
  const base = `${ORIGIN}/auth/callback`;
  return [new URL(location, base), new URL(decodeURIComponent(location), base)];
}

describe("safeReturnTo", () => {
  it("has a corpus of at least 40 hostile values", () => {
    expect(HOSTILE_RETURN_TO.length).toBeGreaterThanOrEqual(40);
  });

  for (const value of HOSTILE_RETURN_TO)
    it(`keeps ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)} on this origin`, () => {
      const result = safeReturnTo(value);
      expect(result).toMatch(/^\/(?![/\\])/);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
      expect(result).not.toMatch(/[\u0000-\u001f\u007f\\]/);
      for (const url of landings(result)) {
        expect(url.origin).toBe(ORIGIN);
        expect(url.pathname).not.toMatch(/^\/auth(\/|$)/i);
      }
      // What comes back is a fixed point: checking it again changes nothing.
      expect(safeReturnTo(result)).toBe(result);
    });

  it("keeps 20,000 values built from hostile pieces on this origin (seeded, so a failure repeats)", () => {
    const pieces = [
      ...["/", "//", "\\", ".", "..", "/./", "/../", "%2e", "%2E", "%2e%2e", "%2f", "%2F", "%5c", "%5C"],
      ...["%252f", "%252e", "%25", "..%2f", "%c0%af", "%ef%bc%8f", "\uff0f", "\u2215", "\u3002"],
      ...["\t", "\n", "\r", "%09", "%0a", "%00", " ", "@", ":", "?", "#", ";", "http:", "evil.example"],
      ...["a", "auth", "ui"],
    ];
    let seed = 17;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const failures: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      let value = "";
      for (let n = 1 + (next() % 7); n > 0; n--) value += pieces[next() % pieces.length];
      const result = safeReturnTo(value);
      const ok =
        /^\/(?![/\\])/.test(result) &&
        landings(result).every((u) => u.origin === ORIGIN && !/^\/auth(\/|$)/i.test(u.pathname)) &&
        safeReturnTo(result) === result;
      if (!ok) failures.push(`${JSON.stringify(value)} -> ${JSON.stringify(result)}`);
    }
    expect(failures.slice(0, 10)).toEqual([]);
  });

  it("returns the audit's value and the other dot-segment tricks as /", () => {
    for (const value of [
      "/.//evil.example",
      "/..//evil.example",
      "/%2e//evil.example",
      "/a/..//evil.example",
    ])
      expect(safeReturnTo(value), value).toBe("/");
  });

  it("keeps a plain path with its query, and normalises harmless dot segments", () => {
    expect(safeReturnTo("/repos/acme/app/-/tree/main?at=3&path=docs%2Fa.md")).toBe(
      "/repos/acme/app/-/tree/main?at=3&path=docs%2Fa.md",
    );
    expect(safeReturnTo("/ui/./orgs/../orgs/acme")).toBe("/ui/orgs/acme");
    expect(safeReturnTo(undefined)).toBe("/");
    expect(safeReturnTo("")).toBe("/");
  });
});
