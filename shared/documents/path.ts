/**
 * How Quire names a place inside a JSON or YAML document, in merge conflicts, structured diffs and
 * the policy input: `limits.max_files`, `owners[2]`, `paths["a.b"]`. Keys that are plain
 * identifiers join with dots; any other key is quoted in brackets as a JSON string; array
 * elements are their index in brackets. The root is the empty string.
 */
export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

export function formatPath(segments: readonly PathSegment[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
