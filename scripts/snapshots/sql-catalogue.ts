import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { type Literal, literalsOf, type Part } from "./literals.ts";

/**
 * The SQL catalogue: every SQL statement in `shared/` and `functions/`, written out in full under
 * its name, one file per module (`docs/sql/commits.sql` for `shared/commits/`), so a change to a
 * query shows in review as a change to SQL. A statement's name is the constant that holds it, or
 * the name it is prepared under (`prepared("commit_insert", ...)`); interpolated constants
 * (`${job_columns}`) are filled in, from the same file or a relative import; any other
 * interpolation is shown as written. SQL inline in a call is listed too, as `(inline)`.
 */

/** A statement begins with one of these words and goes on; fragments such as column lists do not. */
const STATEMENT = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|VALUES|TRUNCATE|LOCK|SET|CALL|NOTIFY)\s+\S/;
/** Transaction control is withTx's business, not a query worth reviewing. */
const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK)\s*$/i;
const SOURCE_ROOTS = ["shared", "functions"];

interface Named {
  literal: Literal;
  /** The constant (or object property) holding it, if any. */
  constant: string | undefined;
  /** The name it is prepared under, if it is the text of `prepared(name, text)`. */
  prepared: string | undefined;
}

function tsFiles(root: string, dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true })
    .flatMap((e) => {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) return tsFiles(root, rel);
      return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [rel] : [];
    })
    .sort();
}

const PREPARED_CALL = /\bprepared\s*(?:<[^()]*>)?\(\s*$/;
const PREPARED_TEXT = /\bprepared\s*(?:<[^()]*>)?\(\s*(["'])([\w.-]+)\1\s*,\s*$/;

/**
 * `const name = <literal>`, also through a tag or a call: `= sql\``, `= prepared("n", \``,
 * `= prepared<Row>("n", \``.
 */
const ASSIGNED =
  /\b(?:const|let)\s+([\w$]+)\s*(?::[^=;]+)?=\s*(?:[\w$.]+\s*(?:<[^()]*>)?(?:\(\s*(?:(["'])[\w.-]+\2\s*,\s*)?)?)?$/;
/** `{ name: <literal> }`. */
const PROPERTY = /(?:^|[{,\s])([\w$]+)\s*:\s*$/;

/** What the code just before a literal says about it. */
function nameOf(source: string, literal: Literal): Omit<Named, "literal"> | "skip" {
  const before = source.slice(Math.max(0, literal.start - 300), literal.start);
  if (PREPARED_CALL.test(before)) return "skip"; // the name argument itself
  const prepared = PREPARED_TEXT.exec(before)?.[2];
  const constant = ASSIGNED.exec(before)?.[1] ?? PROPERTY.exec(before)?.[1];
  return { constant, prepared };
}

/** `prepared("name", someConstant)`: the constant's text is prepared under that name. */
function preparedConstants(source: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const call = /\bprepared\s*(?:<[^()]*>)?\(\s*(["'])([\w.-]+)\1\s*,\s*([A-Za-z_$][\w$]*)\s*\)/g;
  for (const m of source.matchAll(call)) {
    const [, , name, constant] = m as unknown as [string, string, string, string];
    out.set(constant, [...(out.get(constant) ?? []), name]);
  }
  return out;
}

/** Names imported from relative modules: local name → [file, exported name]. */
function relativeImports(file: string, source: string): Map<string, [string, string]> {
  const out = new Map<string, [string, string]>();
  for (const m of source.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*"(\.[^"]+)"/g)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[2] ?? ""));
    for (const spec of (m[1] ?? "").split(",")) {
      const [exported, local] = spec
        .replace(/^\s*type\s+/, "")
        .split(/\s+as\s+/)
        .map((s) => s.trim());
      if (exported) out.set(local ?? exported, [target, exported]);
    }
  }
  return out;
}

interface SourceFile {
  file: string;
  source: string;
  named: Named[];
  constants: Map<string, Part[]>;
  imports: Map<string, [string, string]>;
}

function readSource(root: string, file: string): SourceFile {
  const source = readFileSync(path.join(root, file), "utf8");
  const named: Named[] = [];
  const constants = new Map<string, Part[]>();
  for (const literal of literalsOf(source)) {
    const name = nameOf(source, literal);
    if (name === "skip") continue;
    named.push({ literal, ...name });
    if (name.constant) constants.set(name.constant, literal.parts);
  }
  return { file, source, named, constants, imports: relativeImports(file, source) };
}

class Resolver {
  readonly #files: Map<string, SourceFile>;
  constructor(files: Map<string, SourceFile>) {
    this.#files = files;
  }

  /** The text of `parts` with every interpolated constant filled in that can be found. */
  text(file: SourceFile, parts: Part[], seen = new Set<string>()): string {
    return parts
      .map((p) => {
        if (typeof p === "string") return p;
        const found = this.#constant(file, p.expr);
        const key = found && `${found.file.file}#${p.expr}`;
        if (!found || !key || seen.has(key)) return `\${${p.expr}}`;
        return this.text(found.file, found.parts, new Set([...seen, key]));
      })
      .join("");
  }

  #constant(file: SourceFile, name: string): { file: SourceFile; parts: Part[] } | undefined {
    const local = file.constants.get(name);
    if (local) return { file, parts: local };
    const imported = file.imports.get(name);
    const target = imported && this.#files.get(imported[0].replace(/\.js$/, ".ts"));
    const parts = imported && target?.constants.get(imported[1]);
    return target && parts ? { file: target, parts } : undefined;
  }
}

/** Removes the indentation common to every line after the first, and blank edges. */
function tidy(sql: string): string {
  const lines = sql.replace(/\s+$/, "").split("\n");
  const rest = lines.slice(1).filter((l) => l.trim() !== "");
  const indent = Math.min(...rest.map((l) => /^ */.exec(l)?.[0].length ?? 0));
  const body = [
    lines[0]?.trim() ?? "",
    ...lines.slice(1).map((l) => l.slice(Number.isFinite(indent) ? indent : 0)),
  ];
  return body
    .join("\n")
    .replace(/^\s*\n/, "")
    .trim();
}

function heading(n: Named, preparedUnder: string[]): string {
  const prepared = [...(n.prepared ? [n.prepared] : []), ...preparedUnder];
  const name = n.constant ?? n.prepared ?? "(inline)";
  const as = prepared.filter((p) => p !== name);
  if (prepared.length === 0) return `-- ${name}`;
  return as.length === 0 ? `-- ${name} (prepared)` : `-- ${name} (prepared as ${as.join(", ")})`;
}

/** The module a source file belongs to: `shared/commits/x.ts` → `commits`, `shared/secrets.ts` → `secrets`. */
function moduleOf(file: string): string {
  const [, first, second] = file.split("/");
  return second === undefined ? (first ?? "").replace(/\.ts$/, "") : (first ?? "");
}

/** The catalogue: `docs/sql/<module>.sql` → its contents. */
export function sqlCatalogue(root: string): Map<string, string> {
  const files = new Map(
    SOURCE_ROOTS.flatMap((dir) => tsFiles(root, dir)).map((f) => [f, readSource(root, f)] as const),
  );
  const resolver = new Resolver(files);
  const modules = new Map<string, string[]>();
  for (const file of files.values()) {
    const prepared = preparedConstants(file.source);
    const entries = file.named.flatMap((n) => {
      const sql = resolver.text(file, n.literal.parts);
      if (!STATEMENT.test(sql) || TRANSACTION_CONTROL.test(sql)) return [];
      return [`${heading(n, n.constant ? (prepared.get(n.constant) ?? []) : [])}\n${tidy(sql)};\n`];
    });
    if (entries.length === 0) continue;
    const module = moduleOf(file.file);
    modules.set(module, [...(modules.get(module) ?? []), `-- ${file.file}\n\n${entries.join("\n")}`]);
  }
  const out = new Map<string, string>();
  for (const [module, sections] of [...modules].sort(([a], [b]) => a.localeCompare(b))) {
    const header = `-- Generated by \`npm run snapshots\` from the SQL in shared/ and functions/: do not edit.\n`;
    out.set(`docs/sql/${module}.sql`, `${header}\n${sections.join("\n")}`);
  }
  return out;
}
