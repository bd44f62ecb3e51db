import { createHash, randomBytes, randomUUID } from "node:crypto";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { bodyText } from "./text.ts";

/** A string value at least this many bytes long is lifted out of the text that JSON.parse reads. */
const LIFT_FROM_BYTES = 64 * 1024;
/**
 * A standard base64 value this long is lifted too when some key is decoded: a 500-file commit of
 * 4 KiB files is 2.7 MiB of them, which would otherwise be held as text, strings and bytes.
 */
const LIFT_BASE64_FROM_BYTES = 1024;
/**
 * Base64 characters decoded per step (a multiple of 4): each step's characters are copied out as a
 * string small enough for V8's young generation, which the next scavenge frees; 1 MiB strings went
 * to the large-object space, where the garbage of a 30 MiB value waited for a full collection.
 */
const DECODE_STEP_CHARS = 64 * 1024;
/** Other requests are served between steps this many characters apart. */
const YIELD_EVERY_CHARS = 1024 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const EQUALS = 0x3d;

/** A lifted string: where its characters are in the body, and whether they are standard base64. */
interface Span {
  start: number;
  end: number;
  base64: boolean;
}

/** A base64 value decoded from the body's bytes, and the SHA-256 of the decoded bytes. */
export interface DecodedBytes {
  data: Buffer;
  sha256: Buffer;
}

/**
 * The base64 values of a large body decoded as it was parsed (`parseDecodingBase64`), by the
 * placeholder that stands for each in the parsed value.
 */
export type DecodedContents = ReadonlyMap<string, DecodedBytes>;
export const NO_DECODED: DecodedContents = new Map();

/** What a lifting parse gives: the value, and the spans its base64 placeholders stand for. */
interface Lifted {
  value: unknown;
  pending: Map<string, Span>;
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
  return lift(body, new Set()).value;
}

/**
 * As `parseLiftingLongStrings`, except that each long value under one of `base64Keys` that is
 * standard base64 (what shared/api/commits.ts accepts as a file's content) never becomes a string:
 * it is decoded and hashed in place, in the body's own bytes, and the parsed value holds a short
 * placeholder for it, itself standard base64 (so the schema judges it as it judged the content),
 * which `decoded` maps to the bytes. A 30 MiB commit is then held once, as its body, instead of as
 * its body, its content string and the decoded bytes (docs/benchmarks.md, "Where the memory goes").
 * The body's bytes are overwritten: call it when nothing else will read them (the idempotency
 * key's hash of the body is taken before the body is parsed).
 */
export async function parseDecodingBase64(
  body: Buffer,
  base64Keys: ReadonlySet<string>,
): Promise<{ value: unknown; decoded: DecodedContents }> {
  const { value, pending } = lift(body, base64Keys);
  const decoded = new Map<string, DecodedBytes>();
  for (const [placeholder, span] of pending) decoded.set(placeholder, await decodeInPlace(body, span));
  return { value, decoded };
}

function lift(body: Buffer, base64Keys: ReadonlySet<string>): Lifted {
  const pending = new Map<string, Span>();
  const spans = longPlainStrings(body, base64Keys.size > 0 ? LIFT_BASE64_FROM_BYTES : LIFT_FROM_BYTES);
  if (spans.length === 0) return { value: JSON.parse(bodyText(body)), pending };
  const prefix = `quire-lifted-${randomUUID()}-`;
  const pieces: Buffer[] = [];
  let from = 0;
  spans.forEach((span, i) => {
    pieces.push(body.subarray(from, span.start), Buffer.from(`${prefix}${i}`));
    from = span.end;
  });
  pieces.push(body.subarray(from));
  const text = bodyText(Buffer.concat(pieces));
  const stands = placeholders();
  try {
    const value = JSON.parse(text, (key, value: unknown) => {
      if (typeof value !== "string" || !value.startsWith(prefix)) return value;
      const span = spans[Number(value.slice(prefix.length))];
      if (!span) return value;
      if (!span.base64 || !base64Keys.has(key)) return body.toString("latin1", span.start, span.end);
      const placeholder = stands();
      pending.set(placeholder, span);
      return placeholder;
    });
    return { value, pending };
  } catch {
    // Positions in the shortened text are not the body's: the whole text gives the real message.
    return { value: JSON.parse(bodyText(body)), pending: new Map() };
  }
}

/**
 * Distinct placeholders of decoded values: 15 random bytes of the request and a 3-byte counter,
 * 24 characters of standard base64 without padding. A client cannot send one but by guessing
 * the random part.
 */
function placeholders(): () => string {
  const random = randomBytes(15);
  let next = 0;
  return () => {
    const n = next++;
    return Buffer.concat([random, Buffer.from([n >> 16, (n >> 8) & 0xff, n & 0xff])]).toString("base64");
  };
}

/**
 * Decodes the base64 characters of `span` into the body's own bytes from the span's start, a step
 * at a time, and hashes them on the way. In place is safe: each step's characters are copied out
 * first, and its 3 bytes for every 4 characters end before the next step's characters begin.
 */
async function decodeInPlace(body: Buffer, span: Span): Promise<DecodedBytes> {
  const hash = createHash("sha256");
  let out = span.start;
  for (let at = span.start; at < span.end; at += DECODE_STEP_CHARS) {
    if (at > span.start && (at - span.start) % YIELD_EVERY_CHARS === 0) await yieldToEventLoop();
    const step = body.toString("latin1", at, Math.min(at + DECODE_STEP_CHARS, span.end));
    const written = body.write(step, out, "base64");
    hash.update(body.subarray(out, out + written));
    out += written;
  }
  return { data: body.subarray(span.start, out), sha256: hash.digest() };
}

/**
 * The characters (between the quotes) of each string token of at least LIFT_FROM_BYTES (standard
 * base64: `base64From`) that holds only printable ASCII and no escape, so that its value is
 * exactly its bytes, and that is not an object key (a key stays in the text, where an unknown one
 * is named in the refusal). A quote outside a string can only open one in valid JSON; in invalid
 * JSON a misread span is harmless, since one valid string token stands in for another and the
 * error elsewhere remains.
 */
function longPlainStrings(body: Buffer, base64From: number): Span[] {
  const spans: Span[] = [];
  let at = body.indexOf(QUOTE);
  while (at !== -1) {
    const close = closingQuote(body, at);
    if (close === -1) break;
    const start = at + 1;
    if (close - start >= base64From && !isKey(body, close)) {
      const kind = plainKind(body, start, close);
      if (kind === "base64" || (kind === "plain" && close - start >= LIFT_FROM_BYTES))
        spans.push({ start, end: close, base64: kind === "base64" });
    }
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

/** Per byte: 2 a base64 letter, 1 other printable ASCII but a backslash, 0 anything else. */
const BYTE_KIND = new Uint8Array(256).map((_, b) => {
  const c = String.fromCharCode(b);
  if (/[A-Za-z0-9+/]/.test(c)) return 2;
  return b >= 0x20 && b <= 0x7e && b !== BACKSLASH ? 1 : 0;
});

/**
 * `base64`: standard base64 with padding, by the rule of shared/api/commits.ts (a multiple of 4
 * characters of the alphabet, `=` only in the last two and only up to the end). `plain`: other
 * printable ASCII without a backslash, which latin1 reads as JSON would. `other`: neither.
 */
function plainKind(body: Buffer, start: number, end: number): "base64" | "plain" | "other" {
  let letters = true;
  for (let i = start; i < end; i++) {
    const kind = BYTE_KIND[body[i] as number];
    if (kind === 0) return "other";
    if (kind === 1) letters = false;
  }
  if (letters) return (end - start) % 4 === 0 ? "base64" : "plain";
  return isPaddedBase64(body, start, end) ? "base64" : "plain";
}

/** Letters but for `=` or `==` at the end, in a multiple of 4 characters. */
function isPaddedBase64(body: Buffer, start: number, end: number): boolean {
  if ((end - start) % 4 !== 0) return false;
  const padding = body[end - 2] === EQUALS ? 2 : body[end - 1] === EQUALS ? 1 : 0;
  if (padding === 0) return false;
  for (let i = end - padding; i < end; i++) if (body[i] !== EQUALS) return false;
  for (let i = start; i < end - padding; i++) if (BYTE_KIND[body[i] as number] !== 2) return false;
  return true;
}
