import YAML from "yaml";
import { type Html, html } from "../html.ts";
import { scalarMarkup } from "./highlight.ts";

/**
 * JSON and YAML shown by their structure beside the text: objects and lists as nested, foldable
 * lists of keys and values. A big document is cut after MAX_NODES values (the source shows the
 * rest), so the page stays small however large the file.
 */
const MAX_NODES = 5_000;

/** How to parse a JSON or YAML file into its documents (YAML may hold several); null for other files. */
function parseData(path: string, contentType: string): ((text: string) => unknown[]) | null {
  const type = contentType.split(";")[0]?.trim() ?? "";
  const lower = path.toLowerCase();
  if (type === "application/json" || lower.endsWith(".json")) return (text) => [JSON.parse(text)];
  if (type.includes("yaml") || lower.endsWith(".yaml") || lower.endsWith(".yml"))
    return (text) =>
      YAML.parseAllDocuments(text).map((doc) => {
        if (doc.errors.length > 0) throw doc.errors[0];
        return doc.toJS({ maxAliasCount: 100 });
      });
  return null;
}

function scalar(value: unknown): Html {
  if (typeof value === "string") return scalarMarkup("string", JSON.stringify(value));
  if (typeof value === "number" || typeof value === "bigint") return scalarMarkup("number", String(value));
  if (value === null || value === undefined || typeof value === "boolean")
    return scalarMarkup("literal", String(value ?? null));
  if (value instanceof Date) return scalarMarkup("string", value.toISOString());
  return scalarMarkup("string", String(value));
}

function entriesOf(value: object): [string, unknown][] {
  if (value instanceof Map) return [...value.entries()].map(([k, v]) => [String(k), v]);
  if (value instanceof Set) return [...value.values()].map((v, i) => [String(i), v]);
  return Object.entries(value);
}

/** One value as a tree, counting values against the budget. */
function node(value: unknown, budget: { left: number }): Html {
  budget.left--;
  if (budget.left < 0) return html`<span class="muted">&hellip;</span>`;
  if (typeof value !== "object" || value === null || value instanceof Date) return scalar(value);
  const list = Array.isArray(value);
  const entries = entriesOf(value);
  const summary = list ? `[${entries.length}]` : `{${entries.length}}`;
  if (entries.length === 0) return html`<span class="muted">${list ? "[]" : "{}"}</span>`;
  return html`<details open><summary class="muted">${summary}</summary><ul>${entries.map(
    ([key, v]) =>
      html`<li>${list ? html`<span class="muted">${key}</span>` : scalarMarkup("attr", key)}: ${node(v, budget)}</li>`,
  )}</ul></details>`;
}

/** The structure of a JSON or YAML text; null for other files, or when the text does not parse. */
export function dataStructure(path: string, contentType: string, text: string): Html | null {
  const parse = parseData(path, contentType);
  if (!parse) return null;
  let documents: unknown[];
  try {
    documents = parse(text);
  } catch {
    return null;
  }
  const budget = { left: MAX_NODES };
  return html`<div class="structure">${documents.map((d) => html`<div class="document">${node(d, budget)}</div>`)}</div>`;
}
