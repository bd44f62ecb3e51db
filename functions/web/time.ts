import { type Html, html } from "./html.ts";

/**
 * A moment as `<time>`: the server writes it in UTC (the page works without script), and the
 * page's script rewrites the text to the reader's time zone; the title keeps the UTC value on hover.
 */
export function timeTag(d: Date | string): Html {
  const iso = new Date(d).toISOString();
  const utc = `${iso.replace("T", " ").slice(0, 16)} UTC`;
  return html`<time datetime="${iso}" title="${utc}" data-utc>${utc}</time>`;
}
