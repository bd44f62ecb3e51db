/*
 * How values go into a path, mirroring how the server takes them apart (shared/http/match.ts): it
 * splits on `/`, then percent-decodes each segment. So a `:name*` value (a repo, a branch or a file
 * path, which may hold slashes) keeps its slashes as separators and has each segment encoded; a
 * `:name` value is one segment, its own slashes encoded as `%2F`.
 */

/** One segment, with every character that is not unreserved percent-encoded. */
function encodeSegment(segment: string): string {
  // encodeURIComponent leaves ! ' ( ) * alone; they are legal in a path but encoding them is safe
  // and keeps a segment of `*` from reading as something else to a proxy.
  return encodeURIComponent(segment).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * The concrete path of a pattern: each `:name` or `:name*` replaced by its value. A `:name*`
 * value may not have empty segments (`a//b`, a leading or trailing `/`) nor a `-` segment, which
 * the server could not tell from its separator: those throw, before any request is made
 * (`lenient` sends them anyway, for tests of how the server refuses them).
 */
export function fillPath(
  pattern: string,
  params: Record<string, string> = {},
  opts: { lenient?: boolean } = {},
): string {
  return pattern.replace(/:(\w+)(\*?)/g, (whole, name: string, star: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for ${whole} in ${pattern}`);
    if (value === "" && !opts.lenient) throw new Error(`${name} is empty`);
    if (star === "") return encodeSegment(value);
    const segments = value.split("/");
    if (!opts.lenient && segments.some((s) => s === "" || s === "-"))
      throw new Error(`${name} '${value}' has an empty or '-' segment, which no path can carry`);
    return segments.map(encodeSegment).join("/");
  });
}

/** `?a=1&b=x` of the defined values of a query object; "" when there are none. */
export function queryString(query: object | undefined): string {
  const entries = Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== null);
  return entries.length === 0
    ? ""
    : `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)]))}`;
}
