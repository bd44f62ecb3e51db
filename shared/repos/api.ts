import { z } from "zod";
import { orgName, repoName, repoSegments } from "../api/names.ts";

/**
 * The full name `POST /repos` creates from `{owner, name}` (docs/names.md). A `name` of two or
 * more segments whose first is `owner` (compared ignoring case) is the full name; any other `name`
 * is relative to `owner`, as the spec's origin clients send it: `{owner: "acme", name: "docs"}`
 * and `{owner: "acme", name: "acme/docs"}` both mean `acme/docs`, `name: "team/docs"` means
 * `acme/team/docs`, and `acme/acme/x` is reached only by its full name. A full name whose first
 * segment differs from `owner` only in case is refused (null): which org was meant is not clear.
 */
export function fullRepoName(owner: string, name: string): string | null {
  const [first, ...rest] = name.split("/");
  if (rest.length === 0 || first?.toLowerCase() !== owner.toLowerCase()) return `${owner}/${name}`;
  return first === owner ? name : null;
}

/** Why the full name made from `{owner, name}` is refused, or undefined when it is a valid one. */
function fullNameProblem(owner: string, full: string | null): string | undefined {
  if (full === null) return `must start with the owner exactly as written, '${owner}/...'`;
  const problem = repoName.safeParse(full).error?.issues[0]?.message;
  return problem && `${problem} (read as '${full.slice(0, 80)}')`;
}

/** `POST /repos`: `name` resolved to the full repo name, which must be a valid one. */
export const createRepoRequest = z
  .strictObject({ owner: orgName, name: repoSegments })
  .transform(({ owner, name }, ctx) => {
    const full = fullRepoName(owner, name);
    const problem = fullNameProblem(owner, full);
    if (full === null || problem !== undefined) {
      ctx.addIssue({ code: "custom", path: ["name"], message: problem ?? "is not a repo name" });
      return z.NEVER;
    }
    return { owner, name: full };
  });
