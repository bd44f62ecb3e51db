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

/** A request's path, split and decoded once for every pattern it is matched against. */
export interface RequestPath {
  raw: string[];
  /** Each segment decoded; null where it does not decode or decodes to "" (no parameter takes it). */
  decoded: (string | null)[];
}

/** `path` split into its segments, each decoded once. */
export function requestPath(path: string): RequestPath {
  const raw = segmentsOf(path);
  return { raw, decoded: raw.map((s) => decode(s) || null) };
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
  return matchSegments(patternSegments(pattern), requestPath(path));
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

/** `matchPath` on a path already split: a dispatcher splits and decodes the request's path once for every route. */
export function matchSegments(pat: string[], path: RequestPath): Record<string, string> | null {
  // Most patterns start with a literal ("repos", "orgs", "ui"): a different one cannot match.
  const first = pat[0];
  if (first !== undefined && !first.startsWith(":") && first !== path.raw[0]) return null;
  const params: Record<string, string> = {};
  return walk(pat, 0, path, 0, params) ? params : null;
}

function walk(
  pat: string[],
  i: number,
  path: RequestPath,
  j: number,
  params: Record<string, string>,
): boolean {
  const p = pat[i];
  const { raw, decoded } = path;
  if (p === undefined) return j === raw.length;
  if (p.startsWith(":") && p.endsWith("*")) {
    // The segments it may take end at the first `-` or segment that does not decode; the longest
    // run first, each shorter one in turn until the rest of the pattern matches.
    let stop = j;
    while (stop < raw.length && raw[stop] !== "-" && decoded[stop] !== null) stop++;
    for (let end = stop; end > j; end--) {
      if (walk(pat, i + 1, path, end, params)) {
        params[p.slice(1, -1)] = decoded.slice(j, end).join("/");
        return true;
      }
    }
    return false;
  }
  const s = raw[j];
  if (s === undefined) return false;
  if (p.startsWith(":")) {
    const d = decoded[j];
    if (d === null || d === undefined) return false;
    if (!walk(pat, i + 1, path, j + 1, params)) return false;
    params[p.slice(1)] = d;
    return true;
  }
  return p === s && walk(pat, i + 1, path, j + 1, params);
}
