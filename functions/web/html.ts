/**
 * The one way pages make HTML: a tagged template that escapes every interpolated value unless it
 * is already `Html` (the result of another `html` template, or of `trusted` for markup this
 * service produced itself, such as markdown-it's output with raw HTML disabled). Arrays are
 * joined, `null`, `undefined` and `false` render nothing, so conditionals read naturally.
 */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Text made safe for an element's content and for a quoted attribute value. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);

function render(value: Value): string {
  if (value instanceof Html) return value.text;
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i] as Value) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** Markup this service generated itself and vouches for (never user input). */
export const trusted = (markup: string): Html => new Html(markup);
