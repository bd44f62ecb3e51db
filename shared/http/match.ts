/** The raw (still percent-encoded) segments of a path; an empty path is `[]`. */
export function segmentsOf(path: string): string[] {
  return path.split("/").filter((s, i, all) => !(s === "" && (i === 0 || i === all.length - 1)));
}

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * Matches a path against a pattern and returns its decoded parameters, or null.
 *
 * `:name` takes one segment; `:name*` takes one or more, and never the `-` segment that separates a
 * repo name from the rest, so `/repos/:repo*` / `-` / ... splits on the first `/-/`. Greedy params
 * backtrack, so `/file/:path*` / `history` leaves `history` to the literal. A client can keep a `/`
 * inside one value by encoding it as `%2F`.
 */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  return matchSegments(patternSegments(pattern), segmentsOf(path));
}

/** Route patterns are a few hundred constants: split each once, not once per route per request. */
const splitPatterns = new Map<string, string[]>();

/** The segments of a route pattern, split once. */
export function patternSegments(pattern: string): string[] {
  let segments = splitPatterns.get(pattern);
  if (segments === undefined) {
    segments = segmentsOf(pattern);
    splitPatterns.set(pattern, segments);
  }
  return segments;
}

/** `matchPath` on segments already split: a dispatcher splits the request's path once for every route. */
export function matchSegments(pat: string[], segs: string[]): Record<string, string> | null {
  // Most patterns start with a literal ("repos", "orgs", "ui"): a different one cannot match.
  const first = pat[0];
  if (first !== undefined && !first.startsWith(":") && first !== segs[0]) return null;
  const params: Record<string, string> = {};
  return walk(pat, 0, segs, 0, params) ? params : null;
}

function walk(pat: string[], i: number, segs: string[], j: number, params: Record<string, string>): boolean {
  const p = pat[i];
  if (p === undefined) return j === segs.length;
  if (p.startsWith(":") && p.endsWith("*")) {
    const name = p.slice(1, -1);
    for (let end = segs.length; end > j; end--) {
      const taken = segs.slice(j, end);
      if (taken.includes("-")) continue;
      const decoded = taken.map(decode);
      if (decoded.some((d) => d === null || d === "")) continue;
      if (walk(pat, i + 1, segs, end, params)) {
        params[name] = decoded.join("/");
        return true;
      }
    }
    return false;
  }
  const s = segs[j];
  if (s === undefined) return false;
  if (p.startsWith(":")) {
    const d = decode(s);
    if (d === null || d === "") return false;
    if (!walk(pat, i + 1, segs, j + 1, params)) return false;
    params[p.slice(1)] = d;
    return true;
  }
  return p === s && walk(pat, i + 1, segs, j + 1, params);
}
