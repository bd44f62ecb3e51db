/**
 * A comma-separated list as its trimmed, non-empty items (`a, b,,c` → `[a, b, c]`): labels and
 * assignees typed into a web form or given to the CLI. Free of zod, so the CLI bundle can share it.
 */
export const commaList = (s: string): string[] =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
