import { describe, expect, it } from "vitest";
import { allRoutes } from "../../functions/groups.ts";
import { DomainError } from "../../shared/errors.ts";
import { findRoute } from "../../shared/http/dispatch.ts";
import type { AnyRoute } from "../../shared/http/route.ts";

/*
 * The dispatcher matches a path against the few routes its index picks (shared/http/dispatch.ts,
 * `RouteIndex`), with each segment decoded once (shared/http/match.ts). This is the plain
 * algorithm it replaced, written out here as the reference: every route of the table, every split
 * of a greedy parameter, a fresh decode per try. Both must answer every path alike.
 */

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

const split = (path: string) =>
  path.split("/").filter((s, i, all) => !(s === "" && (i === 0 || i === all.length - 1)));

function walk(pat: string[], i: number, segs: string[], j: number, params: Record<string, string>): boolean {
  const p = pat[i];
  if (p === undefined) return j === segs.length;
  if (p.startsWith(":") && p.endsWith("*")) {
    for (let end = segs.length; end > j; end--) {
      const taken = segs.slice(j, end);
      if (taken.includes("-")) continue;
      const decoded = taken.map(decode);
      if (decoded.some((d) => d === null || d === "")) continue;
      if (walk(pat, i + 1, segs, end, params)) {
        params[p.slice(1, -1)] = decoded.join("/");
        return true;
      }
    }
    return false;
  }
  const s = segs[j];
  if (s === undefined) return false;
  if (p.startsWith(":")) {
    const d = decode(s);
    if (d === null || d === "" || !walk(pat, i + 1, segs, j + 1, params)) return false;
    params[p.slice(1)] = d;
    return true;
  }
  return p === s && walk(pat, i + 1, segs, j + 1, params);
}

/** What the reference makes of a request: the route's method and pattern with its parameters, or "refused". */
function reference(
  routes: readonly { route: AnyRoute; pattern: string[]; rank: number }[],
  method: string,
  path: string,
): unknown {
  const segs = split(path);
  const matches = routes.flatMap(({ route, pattern, rank }) => {
    const params: Record<string, string> = {};
    return walk(pattern, 0, segs, 0, params) ? [{ route, params, rank }] : [];
  });
  const best = Math.max(...matches.map((m) => m.rank));
  const found = matches
    .filter((m) => m.rank === best)
    .find(
      (m) =>
        m.route.method === method ||
        (method === "HEAD" && m.route.method === "GET" && m.route.section?.answersHead),
    );
  return found ? { route: `${found.route.method} ${found.route.path}`, params: found.params } : "refused";
}

function indexed(routes: readonly AnyRoute[], method: string, path: string): unknown {
  try {
    const { route, params } = findRoute(routes, method, path);
    return { route: `${route.method} ${route.path}`, params };
  } catch (err) {
    if (err instanceof DomainError) return "refused";
    throw err;
  }
}

/** Values a parameter may meet: slashes, the `-` separator, route words, bad and empty encodings. */
const VALUES = ["acme/docs", "-", "x/-/y", "a%2Fb", "%E0%A4%A", "", "history", "status", "tree"];

/** Paths from every pattern of the table, each parameter in turn given every value, and some mangled. */
function pathsOf(routes: readonly AnyRoute[]): string[] {
  const paths = new Set<string>(["/", "/-", "/repos", "/repos/-/tree", "/repos/a/-", "/repos/a/-/-/tree"]);
  for (const { path } of routes) {
    const parts = split(path);
    for (const k of parts.keys()) {
      for (const value of VALUES) {
        const filled = parts.map((p, i) =>
          i === k ? value : p.startsWith(":") ? (p.endsWith("*") ? "acme/app" : "x") : p,
        );
        paths.add(`/${filled.join("/")}`);
        paths.add(`/${filled.join("/")}/extra`);
      }
    }
  }
  return [...paths];
}

describe("the route index", () => {
  // The whole table, what `npm start` serves (each function's table is a part of it, indexed alike).
  for (const [name, routes] of Object.entries({ all: allRoutes })) {
    it(`answers every path of the ${name} table as matching against every route did`, () => {
      const paths = pathsOf(routes);
      const patterns = routes.map((route) => {
        const pattern = split(route.path);
        return { route, pattern, rank: pattern.filter((s) => !s.startsWith(":")).length };
      });
      expect(paths.length).toBeGreaterThan(routes.length * 10);
      const differ: string[] = [];
      for (const path of paths)
        for (const method of ["GET", "POST"]) {
          const [got, want] = [indexed(routes, method, path), reference(patterns, method, path)];
          if (JSON.stringify(got) !== JSON.stringify(want))
            differ.push(`${method} ${path}: ${JSON.stringify(got)}`);
        }
      expect(differ).toEqual([]);
    });
  }
});
