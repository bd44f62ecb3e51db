import { randomUUID } from "node:crypto";
import { bodyText } from "./text.ts";

/** A string value at least this many bytes long is lifted out of the text that JSON.parse reads. */
const LIFT_FROM_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** A lifted string: where its characters are in the body. */
interface Span {
  start: number;
  end: number;
}

/**
 * `JSON.parse` of a body without the whole body's text: a 30 MiB commit was otherwise held as its
 * bytes, its text and its parsed `content` at once (docs/benchmarks.md, "Where the memory goes").
 * Each long string value of plain ASCII (a file's base64) is cut out of the text and replaced by a
 * placeholder, which a reviver turns back into the string, read straight from the body's bytes.
 * The result is what `JSON.parse(bodyText(body))` gives; when the shortened text does not parse,
 * the whole text is parsed for the exact error.
 */
export function parseLiftingLongStrings(body: Buffer): unknown {
  const spans = longPlainStrings(body);
  if (spans.length === 0) return JSON.parse(bodyText(body));
  const prefix = `quire-lifted-${randomUUID()}-`;
  const pieces: Buffer[] = [];
  let from = 0;
  spans.forEach((span, i) => {
    pieces.push(body.subarray(from, span.start), Buffer.from(`${prefix}${i}`));
    from = span.end;
  });
  pieces.push(body.subarray(from));
  const text = bodyText(Buffer.concat(pieces));
  try {
    return JSON.parse(text, (_key, value: unknown) => {
      if (typeof value !== "string" || !value.startsWith(prefix)) return value;
      const span = spans[Number(value.slice(prefix.length))];
      return span ? body.toString("latin1", span.start, span.end) : value;
    });
  } catch {
    // Positions in the shortened text are not the body's: the whole text gives the real message.
    return JSON.parse(bodyText(body));
  }
}

/**
 * The characters (between the quotes) of each string token of at least LIFT_FROM_BYTES that holds
 * only printable ASCII and no escape, so that its value is exactly its bytes, and that is not an
 * object key (a key stays in the text, where an unknown one is named in the refusal). A quote
 * outside a string can only open one in valid JSON; in invalid JSON a misread span is harmless,
 * since one valid string token stands in for another and the error elsewhere remains.
 */
function longPlainStrings(body: Buffer): Span[] {
  const spans: Span[] = [];
  let at = body.indexOf(QUOTE);
  while (at !== -1) {
    const close = closingQuote(body, at);
    if (close === -1) break;
    const start = at + 1;
    if (close - start >= LIFT_FROM_BYTES && !isKey(body, close) && isPlainAscii(body, start, close))
      spans.push({ start, end: close });
    at = body.indexOf(QUOTE, close + 1);
  }
  return spans;
}

/** The quote that closes the string opened at `open`, or -1. */
function closingQuote(body: Buffer, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = body.indexOf(QUOTE, from);
    if (quote === -1) return -1;
    let backslashes = 0;
    while (quote - 1 - backslashes > open && body[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** Whether the string that closes at `close` is followed by a colon: an object key. */
function isKey(body: Buffer, close: number): boolean {
  let i = close + 1;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x09 || body[i] === 0x0a || body[i] === 0x0d))
    i++;
  return body[i] === COLON;
}

/** Printable ASCII without a backslash: latin1 reads it as JSON would, and JSON allows it raw. */
function isPlainAscii(body: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = body[i] as number;
    if (b < 0x20 || b > 0x7e || b === BACKSLASH) return false;
  }
  return true;
}
