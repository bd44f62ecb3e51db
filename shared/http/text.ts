import { DomainError, type ErrorCode, fail } from "../errors.ts";

/**
 * Text PostgreSQL cannot store, refused once at the edge (docs/errors.md, "Text Quire refuses"):
 * U+0000 (PostgreSQL's `text` and `jsonb` have no NUL) and lone UTF-16 surrogates (no Unicode
 * character; the driver's UTF-8 encoding would silently turn one into U+FFFD). `JSON.parse` makes
 * both out of `\u0000` and `\udc00` escapes, and percent-decoding makes NUL out of `%00`, so they
 * cannot be refused before parsing; every string of a parsed body, query and path is checked
 * (shared/http/dispatch.ts) before any handler sees it.
 */
function textProblem(s: string): string | null {
  if (s.includes("\u0000")) return "must not contain U+0000 (NUL)";
  if (!s.isWellFormed()) return "must not contain a lone UTF-16 surrogate (not Unicode text)";
  return null;
}

/** A node of the walk: its value and how to name it (built only when it is refused). */
interface Node {
  value: unknown;
  key: string;
  parent: Node | undefined;
}

const pathOf = (node: Node | undefined): string =>
  node === undefined ? "" : node.parent === undefined ? node.key : `${pathOf(node.parent)}.${node.key}`;

/** A string PostgreSQL cannot store, and where: its JSON path (`body.files.0.path`). */
export interface BadText {
  path: string;
  problem: string;
}

/**
 * The first string (a value or an object key) in `value` that PostgreSQL cannot store, or null.
 * Walks with its own stack, so a deeply nested body cannot overflow the call stack.
 */
export function findBadText(value: unknown, where: string): BadText | null {
  const stack: Node[] = [{ value, key: where, parent: undefined }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const v = node.value;
    if (typeof v === "string") {
      const problem = textProblem(v);
      if (problem) return { path: pathOf(node), problem };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: String(i), parent: node });
    } else if (v !== null && typeof v === "object") {
      for (const [key, child] of Object.entries(v)) {
        const problem = textProblem(key);
        if (problem) return { path: pathOf(node), problem: `a field name ${problem}` };
        stack.push({ value: child, key, parent: node });
      }
    }
  }
  return null;
}

/** What a path parameter names, so a name no resource can have answers as a missing one does. */
const notFoundCode: Record<string, ErrorCode> = {
  repo: "REPO_NOT_FOUND",
  org: "ORG_NOT_FOUND",
  branch: "BRANCH_NOT_FOUND",
  path: "FILE_NOT_FOUND",
  release_name: "RELEASE_NOT_FOUND",
  token: "INVITE_NOT_FOUND",
};

/**
 * Path parameters name resources, and no resource has a name PostgreSQL cannot store: one such
 * name answers 404 with its resource's code, as a name that does not exist does. `repo` first, so a
 * repo route answers about the repo before anything inside it. Names in `ownRule` are left to the
 * route's schema, whose rule refuses them in its own words (a file path with NUL: 400 INVALID_PATH).
 */
export function refuseBadParams(params: Record<string, string>, ownRule: ReadonlySet<string>): void {
  const names = Object.keys(params).sort((a, b) => Number(b === "repo") - Number(a === "repo"));
  for (const name of names) {
    if (ownRule.has(name)) continue;
    const problem = textProblem(params[name] ?? "");
    if (problem)
      fail(notFoundCode[name] ?? "NOT_FOUND", `path.${name}: no such resource; its name ${problem}`);
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A request body's text. Invalid UTF-8 is refused with 400 MALFORMED_JSON rather than silently
 * turned into U+FFFD (which would store something the client never sent).
 */
export function bodyText(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw new DomainError("MALFORMED_JSON", "the request body is not valid UTF-8");
  }
}

/**
 * The query string as name → value (the last of repeated names), decoded as `URLSearchParams`
 * does (`+` is a space; a `%` not followed by two hex digits stays as it is) except that percent-
 * escapes that are not UTF-8 (`%FF`, an encoded surrogate `%ED%B0%80`) are refused with 400
 * instead of becoming U+FFFD. Its strings are then checked like a body's (findBadText).
 */
export function queryOf(search: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of search.replace(/^\?/, "").split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const name = decodeQueryPart(rawName, rawName);
    out[name] = eq < 0 ? "" : decodeQueryPart(pair.slice(eq + 1), name);
  }
  return out;
}

function decodeQueryPart(part: string, name: string): string {
  return part.replace(/\+/g, " ").replace(/(?:%[0-9A-Fa-f]{2})+/g, (escapes) => {
    const bytes = Buffer.from(escapes.replace(/%/g, ""), "hex");
    try {
      return utf8.decode(bytes);
    } catch {
      return fail("VALIDATION_FAILED", `query.${name}: is not percent-encoded UTF-8`);
    }
  });
}
